import { expect, test } from "bun:test";
import { getMeta } from "../../src/store/sqlite";
import { ingestMemory } from "../../src/core/memories";
import { runReembed } from "../../src/core/memories";
import { search } from "../../src/core/search";
import { hashEmbed } from "../../src/embed/fallback";
import type { EmbedKind, Embedder } from "../../src/embed/types";
import { makeServices } from "../helpers/services";

/** A second vector space: the hashed vector reversed, so spaces differ but stay comparable within themselves. */
class OtherSpace implements Embedder {
  readonly id = "test:reversed-v1";
  readonly kind = "fallback" as const;
  readonly description = "test space";
  calls = 0;
  async embed(texts: string[], _kind: EmbedKind) {
    this.calls++;
    return texts.map((t) => hashEmbed(t).reverse());
  }
}

test("a changed embedder re-embeds stored vectors in resumable batches and search uses only the new space", async () => {
  const first = makeServices();
  const home = first.config.home;
  for (let i = 0; i < 80; i++) await ingestMemory(first, { content: `note ${i}: service ${i % 9} uses port ${8000 + i}` });
  expect(getMeta(first.store, "embedder_id")).toBe("fallback:hash-v1");
  await first.close();

  const other = new OtherSpace();
  const second = makeServices({ home, embedder: other });
  expect(getMeta(second.store, "embedder_id")).toBe(other.id);
  expect(getMeta(second.store, "reembed_cursor")).toBe("0");
  // Until re-embedded, vectors of the old space are not in the index.
  expect(second.index.size).toBe(0);
  const abort = new AbortController();
  const origEmbed = other.embed.bind(other);
  other.embed = async (texts, kind) => {
    const out = await origEmbed(texts, kind);
    if (other.calls === 2) abort.abort(); // "crash" after two batches
    return out;
  };
  await runReembed(second, abort.signal);
  const cursor = Number(getMeta(second.store, "reembed_cursor"));
  expect(cursor).toBeGreaterThan(0);
  expect(second.index.size).toBe(64);
  await second.close();

  // Restart: the index holds only the redone part, the job resumes from the cursor.
  const third = makeServices({ home, embedder: new OtherSpace() });
  expect(third.index.size).toBe(64);
  await runReembed(third);
  expect(getMeta(third.store, "reembed_cursor")).toBeNull();
  expect(third.index.size).toBe(80);
  const stored = third.store.sqlite.query<{ e: Uint8Array }, []>("SELECT embedding e FROM memory_vec ORDER BY rowid LIMIT 1").get()!.e;
  const expected = hashEmbed("note 0: service 0 uses port 8000").reverse();
  expect(Array.from(new Float32Array(stored.buffer, stored.byteOffset, 384))).toEqual(Array.from(expected));
  const r = await search(third, { query: "service 3 port 8030" });
  expect(r.results[0].content).toContain("8030");
  expect(r.results[0].matched_by).toContain("vector");
  await third.close();
});

test("switching the embedder while a re-embed pass runs: no vector of the old space survives, and the index holds only the new one", async () => {
  const first = makeServices();
  const home = first.config.home;
  for (let i = 0; i < 100; i++) await ingestMemory(first, { content: `entry ${i}: worker ${i % 7} drains queue ${i}` });
  await first.close();

  // A pass into OtherSpace is under way (slowed down) when a third space takes over.
  const middle = new OtherSpace();
  const s = makeServices({ home, embedder: middle });
  let switched!: Promise<void>;
  const final: Embedder = {
    id: "test:negated-v1",
    kind: "fallback",
    description: "third space",
    async embed(texts) {
      return texts.map((t) => hashEmbed(t).map((x) => -x));
    },
  };
  const origEmbed = middle.embed.bind(middle);
  middle.embed = async (texts, kind) => {
    const out = await origEmbed(texts, kind);
    // Mid-batch, the way a finished download calls useEmbedder while a pass awaits its vectors.
    if (middle.calls === 2) switched = s.useEmbedder(final);
    return out;
  };
  await runReembed(s);
  await switched;
  // The pass that was running saw the reset cursor and finished the job in the final space.
  if (getMeta(s.store, "reembed_cursor") !== null) await runReembed(s);
  expect(getMeta(s.store, "embedder_id")).toBe(final.id);
  expect(getMeta(s.store, "reembed_cursor")).toBeNull();
  const rows = s.store.sqlite.query<{ seq: number; e: Uint8Array; content: string }, []>("SELECT v.rowid seq, v.embedding e, m.content content FROM memory_vec v JOIN memories m ON m.seq = v.rowid").all();
  expect(rows.length).toBe(100);
  for (const r of rows) {
    const stored = Array.from(new Float32Array(r.e.buffer, r.e.byteOffset, 384));
    expect(stored).toEqual(Array.from(hashEmbed(r.content).map((x) => -x)));
  }
  expect(s.index.size).toBe(100);
  const hit = await search(s, { query: "worker 3 drains queue 45" });
  expect(hit.results[0].content).toContain("queue 45");
  await s.close();
});
