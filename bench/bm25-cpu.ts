/**
 * The SQLite full-text phase of /search, in process (`bun bench/bm25-cpu.ts
 * --home <home> [--queries 300] [--passes 3] [--merge optimize|N]`): opens a
 * seeded home (bench/lib/seed.ts; seed once and reuse a copy of the file) as
 * the server does, waits for the index, then runs the bench's query list
 * (bench/http.ts: NoteGenerator(7)) through storage.search's fullText (the
 * plan and the bm25() statement) and through rank() as a whole, several
 * passes, each query's process CPU time (process.cpuUsage: what a loaded
 * shared machine inflates least) and wall time. The first pass of a fresh
 * process pays the word counts and the page cache. `--merge` first runs
 * FTS5's 'optimize' (one segment) or 'merge' N on the store (timed) and
 * reports the segment count before and after. Prints JSON with the load
 * average and a digest of the top results (to compare two runs' answers).
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { createHash } from "node:crypto";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { queryKeywords, queryVector, rank } from "../src/core/search";
import { benchServices, sqliteOf } from "./lib/services";
import { DEFAULT_SEARCH_LIMIT, SEARCH_CANDIDATES } from "../src/core/search/tuning";
import { FallbackEmbedder } from "../src/embed";
import { NoteGenerator } from "./lib/corpus";
import { round, summarize } from "./lib/stats";

const { values: args } = parseArgs({
  options: { home: { type: "string" }, queries: { type: "string" }, passes: { type: "string" }, merge: { type: "string" } },
});
if (!args.home) throw new Error("--home <seeded home>");
const gen = new NoteGenerator(7);
const queries = Array.from({ length: Number(args.queries ?? 300) }, () => gen.query());
const PASSES = Number(args.passes ?? 3);

const load_before = loadavg().map((x) => round(x));
const s = benchServices(loadConfig({ MEMSVC_HOME: args.home, MEMSVC_OFFLINE: "1" }), { embedder: new FallbackEmbedder(), log: silentLogger });
await s.indexState.ready;
// Rows loaded in the background get their prefilter codes in setImmediate slices; a loop of
// resolved promises never yields to them, so rank() would scan every int8 row: wait for the codes.
const index = s.index as unknown as { codesComplete: boolean };
while (!index.codesComplete) await new Promise((r) => setImmediate(r));
const db = sqliteOf(s).sqlite;
/** FTS5 segments: distinct segment ids among the %_data rows (rowid >> 37 is the segment id). */
const segments = () => db.query<{ n: number }, []>("SELECT count(DISTINCT id >> 37) AS n FROM memories_fts_data WHERE id >> 37 > 0").get()!.n;
const out: Record<string, unknown> = { home: args.home, memories: s.index.memories, load_before, segments_before: segments() };
if (args.merge) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  if (args.merge === "optimize") db.run("INSERT INTO memories_fts(memories_fts) VALUES('optimize')");
  else db.run("INSERT INTO memories_fts(memories_fts, rank) VALUES('merge', ?)", [Number(args.merge)]);
  const c = process.cpuUsage(c0);
  out.merge = { kind: args.merge, wall_ms: Math.round(performance.now() - t0), cpu_ms: Math.round((c.user + c.system) / 1000), segments_after: segments() };
}
const sync = s.storage.search.sync!;
const cpuOf = (fn: () => unknown) => {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  fn();
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1000, wall: performance.now() - t0 };
};
const passes = [];
const digest = createHash("sha1");
for (let p = 0; p < PASSES; p++) {
  const bm25 = { cpu: [] as number[], wall: [] as number[] };
  const whole = { cpu: [] as number[], wall: [] as number[] };
  for (const q of queries) {
    const terms = queryKeywords(q.query);
    let seqs: number[] = [];
    const a = cpuOf(() => (seqs = sync.fullText(terms, q.project, SEARCH_CANDIDATES)));
    bm25.cpu.push(a.cpu);
    bm25.wall.push(a.wall);
    if (p === 0) digest.update(`${seqs.join(",")};`);
    const vector = await queryVector(s, q.query);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await rank(s, q.query, vector, DEFAULT_SEARCH_LIMIT, q.project);
    const c = process.cpuUsage(c0);
    whole.cpu.push((c.user + c.system) / 1000);
    whole.wall.push(performance.now() - t0);
  }
  passes.push({
    pass: p + 1,
    bm25_cpu_ms: summarize(bm25.cpu),
    bm25_wall_ms: summarize(bm25.wall),
    rank_cpu_ms: summarize(whole.cpu),
    rank_wall_ms: summarize(whole.wall),
  });
}
out.passes = passes;
out.fulltext_digest = digest.digest("hex").slice(0, 12);
out.load_after = loadavg().map((x) => round(x));
void s.close();
console.log(JSON.stringify(out, null, 1));
