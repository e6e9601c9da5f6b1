import { afterEach, expect, test } from "bun:test";
import { hashEmbed } from "../../../src/embed/fallback";
import { dbRows, onPostgres } from "../../helpers/engine";
import { makeServices, type TestServices } from "../../helpers/services";
import { deleteMemory } from "../../../src/core/memories";
import { ingestMemory } from "../../../src/core/ingest";

// The search store on PostgreSQL, seeded straight into its tables (so it
// needs nothing of the other capabilities' stores): pgvector HNSW nearest,
// ts_rank full text with the project filter inside the query, /recent's
// fast path against scoring every row, calibration rows, and two servers
// over one database seeing each other's writes at once.
const open: TestServices[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});
const pgOnly = (name: string, fn: () => Promise<void>) => test.skipIf(!onPostgres)(`${name} [PostgreSQL engine: seeded with its own SQL]`, fn);

const vectorText = (v: Float32Array) => `[${Array.from(v).join(",")}]`;

async function insert(
  s: TestServices,
  rows: { content: string; project: string | null; createdAt?: number; strength?: number; links?: number }[],
): Promise<number[]> {
  await s.storage.ready();
  const seqs: number[] = [];
  for (const r of rows) {
    const at = r.createdAt ?? Date.now();
    const [row] = await dbRows<{ seq: number }>(
      s,
      "INSERT INTO memories(id, content, memory_type, project, created_at, updated_at, refreshed_at, strength, link_count) VALUES (?, ?, 'knowledge', ?, ?, ?, ?, ?, ?) RETURNING seq",
      [crypto.randomUUID(), r.content, r.project, at, at, at, r.strength ?? 1, r.links ?? 0],
    );
    await dbRows(s, "INSERT INTO memory_vec(seq, embedding) VALUES (?, ?::vector)", [row.seq, vectorText(hashEmbed(r.content))]);
    seqs.push(row.seq);
  }
  return seqs;
}

const CORPUS = [
  { content: "Kafka consumer lag alerts page the on-call after ten minutes", project: "infra" },
  { content: "The release train for atlas ships every tuesday", project: "atlas" },
  { content: "Redis eviction storms follow a maxmemory policy change", project: "infra" },
  { content: "Atlas deploys go blue green through the staging cluster", project: "atlas" },
  { content: "Kafka topics keep seven days of retention by default", project: null },
];

pgOnly("nearest and full text answer from the database, each project filter inside the query", async () => {
  const s = makeServices();
  open.push(s);
  const [kafka, , , , global] = await insert(s, CORPUS);
  const q = hashEmbed("kafka consumer lag alerts");
  const near = await s.storage.search.nearest(q, 3);
  expect(near[0].seq).toBe(kafka);
  expect(near[0].similarity).toBeGreaterThan(0.5);
  for (let i = 1; i < near.length; i++) expect(near[i - 1].similarity).toBeGreaterThanOrEqual(near[i].similarity);
  expect((await s.storage.search.nearest(q, 3, "atlas")).every((h) => h.seq !== kafka)).toBe(true);
  expect((await s.storage.search.nearest(q, 3, "")).map((h) => h.seq)).toEqual([global]);

  expect(await s.storage.search.fullText(["kafka"], null, 10)).toEqual(expect.arrayContaining([kafka, global]));
  expect(await s.storage.search.fullText(["kafka"], "infra", 10)).toEqual([kafka]);
  // Words only reach the engine; quotes and tsquery operators in them are inert.
  expect(await s.storage.search.fullText(["it's", "o'neil", "a|b", "!&", "back\\slash\\'"], null, 10)).toEqual([]);
  expect(await s.storage.search.documentFrequency("kafka", 10)).toBe(2);
  expect(await s.storage.search.documentFrequency("kafka", 1)).toBe(1);
  // Counted with sequential scans off for that statement alone: nothing is left on the pooled connections.
  expect(await s.storage.search.documentFrequency("o'neil\\'", 10)).toBe(0);
  for (let i = 0; i < 5; i++) expect((await dbRows<{ enable_seqscan: string }>(s, "SHOW enable_seqscan"))[0].enable_seqscan).toBe("on");
  // U+0000 cannot be inlined: bound, it is refused as an invalid value.
  await expect(s.storage.search.documentFrequency("a\u0000b", 10)).rejects.toThrow();
});

pgOnly("a memory another server writes is found by this server's search at once", async () => {
  const a = makeServices();
  const b = makeServices({ home: a.config.home });
  open.push(a, b);
  await a.indexState.ready;
  await b.indexState.ready;
  const [seq] = await insert(a, [{ content: "Terraform state lives in the ops bucket with object locking", project: "infra" }]);
  const hits = await b.storage.search.nearest(hashEmbed("terraform state bucket locking"), 5);
  expect(hits[0]?.seq).toBe(seq);
  expect(await b.storage.search.fullText(["terraform"], "infra", 5)).toEqual([seq]);
  // /health's index_vectors: the count of stored vectors, refreshed within a second.
  const deadline = Date.now() + 3000;
  while (b.index.size !== 1 && Date.now() < deadline) await Bun.sleep(50);
  expect(b.index.size).toBe(1);
  expect(b.indexState.status).toBe("ready");
});

pgOnly("/recent's candidate lists give exactly what scoring every row gives", async () => {
  const s = makeServices();
  open.push(s);
  const now = Date.UTC(2026, 5, 1);
  const day = 86_400_000;
  let x = 12345;
  const rnd = () => (x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32;
  await s.storage.ready();
  // 2,500 rows in one statement (generate_series) with varied strength, links and dates.
  const rows = Array.from({ length: 2500 }, (_, i) => {
    const created = now - Math.floor(rnd() * 365 * day);
    return [
      i,
      i % 8 === 0 ? "c" : i % 3 ? "a" : "b",
      created,
      created + Math.floor(rnd() * (now - created)),
      rnd() < 0.05 ? 1 + rnd() * 4 : 1,
      Math.floor(rnd() ** 3 * 20),
    ];
  });
  await dbRows(
    s,
    `INSERT INTO memories(id, content, memory_type, project, created_at, updated_at, refreshed_at, strength, link_count)
     SELECT 'm' || (r->>0), 'note ' || (r->>0), 'knowledge', r->>1, (r->>2)::bigint, (r->>2)::bigint, (r->>3)::bigint, (r->>4)::float8, (r->>5)::int
       FROM jsonb_array_elements(?::jsonb) AS r`,
    [JSON.stringify(rows)],
  );
  const importance = (r: { strength: number; refreshedAt: number; linkCount: number; createdAt: number }) =>
    r.strength * (0.15 + 0.85 * 0.5 ** (Math.max(0, now - r.refreshedAt) / (30 * day))) +
    0.35 * Math.log(1 + r.linkCount) +
    1.5 * Math.exp(-Math.max(0, now - r.createdAt) / (7 * day));
  const all = await dbRows<{ seq: number; project: string; strength: number; refreshedAt: number; linkCount: number; createdAt: number }>(
    s,
    `SELECT seq, project, strength, refreshed_at AS "refreshedAt", link_count AS "linkCount", created_at AS "createdAt" FROM memories`,
  );
  for (const project of [null, "a", "b", "c"]) {
    for (const limit of [1, 12, 100]) {
      const expected = all
        .filter((r) => project === null || r.project === project)
        .map((r) => ({ seq: r.seq, imp: importance(r) }))
        .sort((p, q) => q.imp - p.imp || q.seq - p.seq)
        .slice(0, limit)
        .map((r) => r.seq);
      const got = await s.storage.search.recent({ now, project, limit });
      expect(got.map((r) => r.seq)).toEqual(expected);
      expect(typeof got[0].createdAt).toBe("number");
    }
  }
});

pgOnly("calibration rows and vector samples", async () => {
  const s = makeServices();
  open.push(s);
  await insert(s, CORPUS);
  expect(await s.storage.search.calibration("onnx:x")).toBeNull();
  await s.storage.search.saveCalibration({ embedderId: "onnx:x", memories: 5, computedAt: 1, stats: '{"a":1}' });
  await s.storage.search.saveCalibration({ embedderId: "onnx:x", memories: 7, computedAt: 2, stats: '{"a":2}' });
  expect(await s.storage.search.calibration("onnx:x")).toEqual({ memories: 7, stats: '{"a":2}' });
  const sample = await s.storage.search.sampleVectors(3);
  expect(sample).toHaveLength(3);
  expect(sample[0].vector).toBeInstanceOf(Float32Array);
  expect(sample[0].vector.length).toBe(384);
  expect(await s.storage.search.reembedPending()).toBe(false);
});

test("the memory count word weights use moves with this server's writes at once, on both engines", async () => {
  const s = makeServices();
  open.push(s);
  await s.storage.ready();
  expect(s.index.memories).toBe(0);
  await Bun.sleep(50); // PostgreSQL: the first read's background count has landed (0)

  const made = [];
  for (const c of CORPUS) made.push(await ingestMemory(s, { content: c.content, project: c.project ?? undefined }));
  // Read at once after the writes: no background recount has had time to land.
  expect(s.index.memories).toBe(CORPUS.length);

  await deleteMemory(s, made[0].id!);
  expect(s.index.memories).toBe(CORPUS.length - 1);
});
