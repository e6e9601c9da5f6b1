import { expect, test } from "bun:test";
import { ingestMemory } from "../../../../src/core/ingest";
import { runReembed } from "../../../../src/core/memories";
import { search } from "../../../../src/core/search";
import { hashEmbed } from "../../../../src/embed/fallback";
import type { EmbedKind, Embedder } from "../../../../src/embed/types";
import { dbRows, onPostgres } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

const getMeta = (s: TestServices, key: string) => s.storage.meta.get(key);

/**
 * Vectors vector search uses: the SQLite engine's in-memory index; on PostgreSQL
 * (no in-process copy) the stored vectors up to the re-embed cursor, the ones
 * its search reads while a pass runs (older ones are of the old space).
 */
async function searchable(s: TestServices): Promise<number> {
  if (!onPostgres) return s.index.size;
  const [{ n }] = await dbRows<{ n: number }>(
    s,
    "SELECT count(*) AS n FROM memory_vec WHERE seq <= coalesce((SELECT CAST(value AS bigint) FROM meta WHERE key = 'reembed_cursor'), 9223372036854775807)",
  );
  return n;
}

/** Stored vectors with their memory's content, in seq order. */
async function storedVectors(s: TestServices): Promise<{ seq: number; content: string; v: number[] }[]> {
  if (onPostgres) {
    const rows = await dbRows<{ seq: number; e: string; content: string }>(
      s,
      "SELECT v.seq AS seq, v.embedding::text AS e, m.content AS content FROM memory_vec v JOIN memories m ON m.seq = v.seq ORDER BY v.seq",
    );
    return rows.map((r) => ({ seq: r.seq, content: r.content, v: (JSON.parse(r.e) as number[]).map(Math.fround) }));
  }
  const rows = await dbRows<{ seq: number; e: Uint8Array; content: string }>(
    s,
    "SELECT v.rowid AS seq, v.embedding AS e, m.content AS content FROM memory_vec v JOIN memories m ON m.seq = v.rowid ORDER BY v.rowid",
  );
  return rows.map((r) => ({ seq: r.seq, content: r.content, v: Array.from(new Float32Array(r.e.buffer, r.e.byteOffset, 384)) }));
}

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
  expect(await getMeta(first, "embedder_id")).toBe("fallback:hash-v1");
  await first.close();

  const other = new OtherSpace();
  const second = makeServices({ home, embedder: other });
  // On PostgreSQL the new space is recorded by a round trip after start.
  await second.indexState.ready;
  expect(await getMeta(second, "embedder_id")).toBe(other.id);
  expect(await getMeta(second, "reembed_cursor")).toBe("0");
  // Until re-embedded, vectors of the old space are not in the index.
  expect(await searchable(second)).toBe(0);
  const abort = new AbortController();
  const origEmbed = other.embed.bind(other);
  other.embed = async (texts, kind) => {
    const out = await origEmbed(texts, kind);
    if (other.calls === 2) abort.abort(); // "crash" after two batches
    return out;
  };
  await runReembed(second, abort.signal);
  const cursor = Number(await getMeta(second, "reembed_cursor"));
  expect(cursor).toBeGreaterThan(0);
  expect(await searchable(second)).toBe(64);
  await second.close();

  // Restart: the index holds only the redone part, the job resumes from the cursor.
  const third = makeServices({ home, embedder: new OtherSpace() });
  await third.indexState.ready;
  expect(await searchable(third)).toBe(64);
  await runReembed(third);
  expect(await getMeta(third, "reembed_cursor")).toBeNull();
  expect(await searchable(third)).toBe(80);
  const [stored] = await storedVectors(third);
  const expected = hashEmbed("note 0: service 0 uses port 8000").reverse();
  expect(stored.v).toEqual(Array.from(expected));
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
  if ((await getMeta(s, "reembed_cursor")) !== null) await runReembed(s);
  expect(await getMeta(s, "embedder_id")).toBe(final.id);
  expect(await getMeta(s, "reembed_cursor")).toBeNull();
  const rows = await storedVectors(s);
  expect(rows.length).toBe(100);
  // + 0: pgvector prints -0 as 0, and toEqual tells them apart.
  for (const r of rows) expect(r.v.map((x) => x + 0)).toEqual(Array.from(hashEmbed(r.content).map((x) => -x + 0)));
  expect(await searchable(s)).toBe(100);
  const hit = await search(s, { query: "worker 3 drains queue 45" });
  expect(hit.results[0].content).toContain("queue 45");
  await s.close();
});
