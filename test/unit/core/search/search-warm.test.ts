import { afterEach, expect, test } from "bun:test";
import { ingestMemory } from "../../../../src/core/ingest";
import { search, warmSearches, warmWordCounts } from "../../../../src/core/search";
import { WARM_SEARCHES } from "../../../../src/core/search/tuning";
import { keywords } from "../../../../src/core/text";
import { dbRows, onSqlite } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

// The word-count warm-up a server runs at start (core/search/warm.ts): it
// counts the common words of a sample of memories through the same cached
// counts search reads, so a fresh server's first searches do not count them.
const open: TestServices[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

const NOTES = [
  "Kafka consumer lag alerts page the on-call after ten minutes",
  "Kafka topics keep seven days of retention by default",
  "Redis eviction storms follow a maxmemory policy change",
  "The connect cluster restarts nightly",
  "Atlas deploys go blue green through the staging cluster",
  "Billing exports run after midnight",
];

async function seeded(): Promise<TestServices> {
  const s = makeServices();
  open.push(s);
  for (const content of NOTES) await ingestMemory(s, { content, project: "infra" });
  return s;
}

test("the warm-up samples the store and counts its words, on both engines; an aborted one counts nothing", async () => {
  const s = await seeded();
  const before = await search(s, { query: "kafka cluster restarts", limit: 5 });
  const aborted = new AbortController();
  aborted.abort();
  expect(await warmWordCounts(s, aborted.signal)).toEqual({ sampled: 0, words: 0, ms: 0 });

  const w = await warmWordCounts(s);
  expect(w.sampled).toBe(NOTES.length);
  // A sample this small keeps every word (the share threshold rounds up to one memory).
  expect(w.words).toBe(new Set(NOTES.flatMap((n) => keywords(n))).size);
  // The same counts search takes: the answer does not change.
  expect(await search(s, { query: "kafka cluster restarts", limit: 5 })).toEqual(before);
});

test.skipIf(!onSqlite)("warmed counts are what search reads afterwards (SQLite: a row written behind the cache's back is not recounted)", async () => {
  const s = await seeded();
  const cap = Math.floor(s.index.memories / 2) + 1;
  await warmWordCounts(s);
  // Straight into the table (its FTS trigger indexes it); the vector index and so the cache's basis do not move.
  await dbRows(
    s,
    "INSERT INTO memories(id, content, memory_type, project, created_at, updated_at, refreshed_at) VALUES (?, ?, 'knowledge', 'infra', 1, 1, 1)",
    [crypto.randomUUID(), "kafka brokers and zookeeper"],
  );
  // "kafka" was counted by the warm-up (2 memories then), "zookeeper" was not.
  expect(cap).toBe(4);
  expect(await s.storage.search.documentFrequency("kafka", cap)).toBe(2);
  expect(await s.storage.search.documentFrequency("zookeeper", cap)).toBe(1);
});

test("a warm-up waiting for the index returns as soon as it is aborted (shutdown drains it before closing the store)", async () => {
  const s = makeServices();
  open.push(s);
  // An index that never reports ready: the warm-up must not hold shutdown hostage.
  const view = Object.create(s, { indexState: { value: { ...s.indexState, ready: new Promise<void>(() => {}) } } });
  const stop = new AbortController();
  const warm = warmWordCounts(view, stop.signal);
  stop.abort();
  expect(await warm).toEqual({ sampled: 0, words: 0, ms: 0 });
});

test("the search warm-up runs WARM_SEARCHES whole searches on SQLite, some within a project, and changes nothing; never on PostgreSQL, an empty store or after an abort", async () => {
  const empty = makeServices();
  open.push(empty);
  expect(await warmSearches(empty)).toBe(0);
  const s = await seeded();
  await ingestMemory(s, { content: "Kafka partitions rebalance when a consumer joins", project: "billing" });
  const before = await search(s, { query: "kafka cluster restarts", limit: 5 });
  const rowsBefore = await dbRows(s, "SELECT id, strength, refreshed_at FROM memories ORDER BY id");
  const scans: (string | null | undefined)[] = [];
  const nearest = s.storage.search.nearest.bind(s.storage.search);
  s.storage.search.nearest = async (v, k, project) => {
    scans.push(project);
    return nearest(v, k, project);
  };
  const aborted = new AbortController();
  aborted.abort();
  expect(await warmSearches(s, aborted.signal)).toBe(0);
  const ran = await warmSearches(s);
  expect(ran).toBe(onSqlite ? WARM_SEARCHES : 0);
  // One vector search per search (the scan it warms), a share of them within a project.
  expect(scans.length).toBe(ran);
  if (onSqlite) {
    expect(scans.filter((p) => p === "infra" || p === "billing").length).toBeGreaterThan(0);
    expect(scans.filter((p) => !p).length).toBeGreaterThan(0);
  }
  // Nothing written (no receipt, no refresh), and the same answer after.
  expect(await dbRows(s, "SELECT id, strength, refreshed_at FROM memories ORDER BY id")).toEqual(rowsBefore);
  expect(Number((await dbRows(s, "SELECT count(*) AS n FROM recall_receipts"))[0].n)).toBe(0);
  expect(await search(s, { query: "kafka cluster restarts", limit: 5 })).toEqual(before);
});
