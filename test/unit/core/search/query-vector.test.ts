import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ingestMemory } from "../../../../src/core/ingest";
import { nearestNow, queryVector, search } from "../../../../src/core/search";
import { FallbackEmbedder, OnnxEmbedder } from "../../../../src/embed";
import { hashEmbed } from "../../../../src/embed/fallback";
import { onPostgres } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";
import { makeTinyModel } from "../../../helpers/tiny-model";

const sha = (v: Float32Array) =>
  createHash("sha256")
    .update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength))
    .digest("hex");

describe("hashing embedder", () => {
  test("document vectors are hash-v1's, bit for bit (stored vectors and the embedder id stay valid)", () => {
    // Digests taken from hash-v1 before query weighting existed.
    expect(sha(hashEmbed("Melanie: we went camping at the lake and roasted marshmallows"))).toBe(
      "70e72c07d2799284b10550929bdc66053bd5b4f755902fefca01c9e13201b992",
    );
    expect(sha(hashEmbed("Never push directly to main; open a pull request"))).toBe("5855e1965e68c8a5905be6d8559e713f999787a2df924b6c95798186404135f0");
    expect(sha(hashEmbed(""))).toBe("373421642a44f7412f4316b06f4e62f24ef7b30c879338577170cfadcf591baa");
    expect(new FallbackEmbedder().id).toBe("fallback:hash-v1");
  });

  test("equal weights give the unweighted vector; a heavier word pulls the vector towards it", () => {
    const e = new FallbackEmbedder();
    const text = "pottery class with Melanie";
    expect(sha(e.embedWeighted(text, () => 3))).toBe(sha(hashEmbed(text)));
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i], 0);
    const pottery = hashEmbed("pottery");
    const melanie = hashEmbed("Melanie");
    const weighted = e.embedWeighted(text, (st) => (st === "pottery" ? 4 : 1));
    expect(dot(weighted, pottery)).toBeGreaterThan(dot(hashEmbed(text), pottery) + 0.2);
    expect(dot(weighted, melanie)).toBeLessThan(dot(hashEmbed(text), melanie));
    // Unit length, like every stored vector.
    expect(dot(weighted, weighted)).toBeCloseTo(1, 5);
  });
});

/** A chat where both speakers' names are in almost every memory: the names say nothing about the topic. */
const CHAT = [
  "Melanie: Thanks Caroline!",
  "Caroline: Thanks Melanie, see you soon",
  "Melanie: Caroline, you are the best",
  "Caroline: Melanie! Good to hear from you",
  "Melanie: Oh Caroline, same here",
  "Caroline: Bye Melanie",
  "Melanie: I finally finished my first pottery bowl at the studio downtown last weekend",
  "Caroline: I have been researching adoption agencies all week",
  "Melanie: We went camping at the lake and roasted marshmallows",
  "Caroline: The support group meeting was really moving yesterday",
];

describe("search weighs the query's words by their IDF in the store (fallback embedder)", () => {
  let s: TestServices;
  beforeAll(async () => {
    s = makeServices();
    for (const content of CHAT) await ingestMemory(s, { content, project: "chat" });
    // PostgreSQL counts the store (what IDF divides by) in the background after writes; a count
    // that a write overtook can read one high until the next refresh, so wait for the true figure.
    for (let i = 0; i < 200 && s.index.size !== CHAT.length; i++) await Bun.sleep(50);
    expect(s.index.size).toBe(CHAT.length);
  });
  afterAll(async () => {
    await s.close();
  });

  const QUESTION = "What did Melanie tell Caroline about pottery?";

  test.skipIf(onPostgres)("the nearest vectors are the memories sharing the rare word, not the names", async () => {
    const plain = (await s.embedder.embed([QUESTION], "query"))[0];
    const weighted = await queryVector(s, QUESTION);
    const content = (seq: number) => s.store.sqlite.query<{ content: string }, [number]>("SELECT content FROM memories WHERE seq = ?").get(seq)!.content;
    // Without weights a short thank-you sharing both names is nearest: what the hashing space did before.
    expect(content(nearestNow(s, plain, 1, "chat")[0].seq)).not.toContain("pottery");
    expect(content(nearestNow(s, weighted, 1, "chat")[0].seq)).toContain("pottery");
  });

  // The weighting itself is proven above (the SQLite index is read synchronously there); this runs the whole path on either engine.
  test("search answers with the pottery memory first, found by both retrievers", async () => {
    const r = await search(s, { query: QUESTION, limit: 3 });
    expect(r.results[0].content).toContain("pottery");
    expect(r.results[0].matched_by).toEqual(expect.arrayContaining(["bm25", "vector"]));
  });
});

describe("a model's query is embedded as it is", () => {
  let root: string;
  let s: TestServices;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "memsvc-qv-"));
    const modelsDir = await makeTinyModel(join(root, "models"), "test/tiny-bge");
    const embedder = await OnnxEmbedder.load({ model: "test/tiny-bge", modelsDir, allowDownload: false });
    s = makeServices({ embedder });
    for (const content of ["the cat sat on the mat", "stock prices fell today"]) await ingestMemory(s, { content });
  });
  afterAll(async () => {
    await s.close();
    rmSync(root, { recursive: true, force: true });
  });

  test("no word weighting for an ONNX embedder: the vector is its query embedding", async () => {
    expect(s.embedder.embedWeighted).toBeUndefined();
    const [expected] = await s.embedder.embed(["where does the cat sleep"], "query");
    expect(sha(await queryVector(s, "where does the cat sleep"))).toBe(sha(expected));
  });
});
