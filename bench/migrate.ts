/**
 * `memsvc migrate` benchmark (`bun bench/migrate.ts`): a store of
 * BENCH_MEMORIES realistic memories (test/helpers/memory-corpus.ts: tags,
 * links, versions, anchors, events, vectors) loaded with `memsvc import`, then
 * `memsvc migrate` (a real child process) into PostgreSQL: PGlite with
 * pgvector served over TCP by a child process, or BENCH_PG_URL when given (a
 * real server). Times the migrate wall clock and prints one JSON object
 * (also written to bench/results/).
 *
 * Env: BENCH_MEMORIES (default 10000), BENCH_BATCH (default: the command's), BENCH_PG_URL.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { VERSION } from "../src/version";
import { writeCorpus } from "../test/helpers/memory-corpus";
import { startPglite } from "../test/helpers/pglite";
import { BUN, childEnv, ROOT, run } from "../test/helpers/process";

const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 10_000);
const BATCH = process.env.BENCH_BATCH;

const home = mkdtempSync(join(tmpdir(), "memsvc-bench-migrate-"));
const counts = writeCorpus(join(home, "corpus.jsonl"), MEMORIES);
const im = await run([BUN, "src/main.ts", "import", join(home, "corpus.jsonl")], childEnv(home), ROOT, 1_800_000);
if (im.code !== 0) throw new Error(`import failed: ${im.stderr}`);
const pg = process.env.BENCH_PG_URL ? null : await startPglite();
const url = process.env.BENCH_PG_URL ?? pg!.url;
const schema = `bench_${Date.now()}`;
const load = loadavg()[0];
const t0 = performance.now();
const r = await run([BUN, "src/main.ts", "migrate", "--to", url, "--schema", schema, ...(BATCH ? ["--batch", BATCH] : [])], childEnv(home), ROOT, 3_600_000);
const seconds = (performance.now() - t0) / 1000;
if (r.code !== 0) throw new Error(`migrate failed: ${r.stderr}`);
pg?.stop();
const rows = counts.memories + counts.links + counts.history + counts.anchors;
const out = {
  bench: "migrate",
  version: VERSION,
  target: pg ? "pglite (its own process, over TCP)" : "BENCH_PG_URL",
  memories: counts.memories,
  links: counts.links,
  versions: counts.history,
  anchors: counts.anchors,
  batch: BATCH ? Number(BATCH) : "default",
  seconds: Math.round(seconds * 10) / 10,
  memories_per_s: Math.round(counts.memories / seconds),
  rows_per_s_excluding_events: Math.round(rows / seconds),
  load_avg_1m_before: Math.round(load * 100) / 100,
  load_avg_1m_after: Math.round(loadavg()[0] * 100) / 100,
};
console.log(JSON.stringify(out, null, 2));
mkdirSync(join(ROOT, "bench", "results"), { recursive: true });
writeFileSync(join(ROOT, "bench", "results", `migrate-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), `${JSON.stringify(out, null, 2)}\n`);
