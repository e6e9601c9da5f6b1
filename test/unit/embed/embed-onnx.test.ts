import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DIMENSIONS, OnnxEmbedder } from "../../../src/embed";
import { makeTinyModel } from "../../helpers/tiny-model";

const MODEL = "test/tiny-bge";
let root: string;
let modelsDir: string;
let embedder: OnnxEmbedder;

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "memsvc-embed-onnx-"));
  modelsDir = await makeTinyModel(join(root, "models"), MODEL);
  embedder = await OnnxEmbedder.load({ model: MODEL, modelsDir, allowDownload: false });
});

afterAll(async () => {
  await embedder?.close();
  rmSync(root, { recursive: true, force: true });
});

describe("OnnxEmbedder with the generated tiny model", () => {
  test("names its vector space after the model and quantization", () => {
    expect(embedder.kind).toBe("onnx");
    expect(embedder.id).toBe("onnx:test/tiny-bge:q8");
  });

  test("returns one unit-length 384-float vector per text, in order", async () => {
    const vectors = await embedder.embed(["the cat sat on the mat", "", "stock prices fell today"], "document");
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(DIMENSIONS);
      expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 5);
    }
    expect(dot(vectors[0]!, vectors[2]!)).toBeLessThan(0.99);
  });

  test("an empty list embeds to an empty list", async () => {
    expect(await embedder.embed([], "document")).toEqual([]);
  });

  test("is deterministic, also across separately loaded instances", async () => {
    const text = "the agent fixed a bug in the sqlite database";
    const [a] = await embedder.embed([text], "document");
    const [b] = await embedder.embed([text], "document");
    const other = await OnnxEmbedder.load({ model: MODEL, modelsDir, allowDownload: false });
    const [c] = await other.embed([text], "document");
    await other.close();
    expect(Array.from(b!)).toEqual(Array.from(a!));
    expect(Array.from(c!)).toEqual(Array.from(a!));
  });

  test("a batch (across batch boundaries, mixed lengths) equals embedding one by one", async () => {
    const texts = Array.from({ length: 37 }, (_, i) => `note ${i}: the team deployed ${"a new release of the service ".repeat(i % 5)}today`);
    const batched = await embedder.embed(texts, "document");
    for (const i of [0, 7, 16, 17, 36]) {
      const [single] = await embedder.embed([texts[i]!], "document");
      expect(batched[i]!.length).toBe(DIMENSIONS);
      for (let d = 0; d < DIMENSIONS; d++) expect(batched[i]![d]!).toBeCloseTo(single![d]!, 5);
    }
  });

  test("similar sentences are closer than unrelated ones", async () => {
    const [cat, kitten, stocks] = await embedder.embed(
      ["the cat sat on the mat", "a cat sleeps on the mat", "stock market prices fell as interest rate rose"],
      "document",
    );
    expect(dot(cat!, kitten!)).toBeGreaterThan(dot(cat!, stocks!) + 0.2);
  });

  test("a query gets the retrieval instruction, a document does not", async () => {
    const text = "where does the cat sleep";
    const [asQuery] = await embedder.embed([text], "query");
    const [asDocument] = await embedder.embed([text], "document");
    expect(dot(asQuery!, asDocument!)).toBeLessThan(0.999);
    const [catDoc, stockDoc] = await embedder.embed(["the cat sleeps on the sofa", "stock prices fell today"], "document");
    expect(dot(asQuery!, catDoc!)).toBeGreaterThan(dot(asQuery!, stockDoc!));
  });

  test("input beyond the model's 512 tokens is truncated, not an error", async () => {
    const long = "cat ".repeat(600);
    const [a, b] = await embedder.embed([`${long} stock market`, `${long} weather today`], "document");
    expect(a!.length).toBe(DIMENSIONS);
    // Only the first 512 tokens count, so the different endings are cut off.
    for (let d = 0; d < DIMENSIONS; d++) expect(a![d]!).toBeCloseTo(b![d]!, 6);
    const [short1, short2] = await embedder.embed(["cat stock market", "cat weather today"], "document");
    expect(dot(short1!, short2!)).toBeLessThan(0.99);
  });

  test("a model of the wrong width is refused with a clear error", async () => {
    const dir = await makeTinyModel(join(root, "narrow"), "test/narrow", { hidden: 256 });
    await expect(OnnxEmbedder.load({ model: "test/narrow", modelsDir: dir, allowDownload: false })).rejects.toThrow("produces 256-dimensional vectors");
  });

  test("onnxruntime's telemetry stays off: nothing is written under the user's home", async () => {
    // A fresh process, because onnxruntime decides this once, when it first starts.
    const home = join(root, "telemetry-home");
    mkdirSync(home);
    const onnxModule = join(import.meta.dir, "../../../src/embed/onnx.ts");
    const script = `
      import { OnnxEmbedder } from ${JSON.stringify(onnxModule)};
      const embedder = await OnnxEmbedder.load({ model: ${JSON.stringify(MODEL)}, modelsDir: ${JSON.stringify(modelsDir)}, allowDownload: false });
      console.log((await embedder.embed(["hello"], "document"))[0].length);`;
    const child = Bun.spawn([process.execPath, "-e", script], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout.trim()).toBe(String(DIMENSIONS));
    expect(existsSync(join(home, ".cache", "Microsoft"))).toBe(false);
  }, 30_000);
});
