/**
 * Before/after in one run (`bun run bench:compare --base <git ref> [--sizes 10000] [--rounds 3]`):
 * the SQLite HTTP bench's search, recall-index and ingest figures for the
 * base ref and for this checkout (HEAD plus any uncommitted change), taken
 * alternately (base, head, base, head, ...) so both see the same machine load.
 *
 * The base ref is checked out into a temporary `git worktree` (node_modules
 * symlinked to this checkout's), removed at the end even on failure. Each
 * side seeds its store with its OWN bench/lib/seed.ts (its schema) and runs
 * its OWN server (`bun <checkout>/src/main.ts server`); this process is the
 * one HTTP client for both (bench/lib/http-run.ts), so the figures compare
 * the servers. Prints one JSON object (also written to bench/results/):
 * each side's per-round figures, the median over rounds, and head/base ratios
 * (below 1: head faster, or for ingest/s, slower). recall_index_* are the
 * first 100 prompts a fresh server answers after its searches (JIT warm-up
 * included); recall_index_warm_* the next 100. *_main_thread_cpu_ms leaves
 * out JavaScriptCore's JIT compiler and GC helper threads (see
 * bench/lib/server.ts mainThreadCpuMsOf): a fresh server of a larger code
 * base compiles more in its first few hundred requests. start_to_* is each
 * round's start-up: spawn to the first 200 of /health, and to `index: ready`.
 *
 * Env: BENCH_QUERIES (default 300), BENCH_INGEST (per round, default 300).
 */
import { spawnSync } from "bun";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { NoteGenerator } from "./lib/corpus";
import { indexReady, startServer, timeIngest, timeRecallIndex, timeSearch, type BenchTarget } from "./lib/http-run";
import { memoryOf, ROOT, serverCommandAt } from "./lib/server";
import { median, round } from "./lib/stats";

const { values: args } = parseArgs({ options: { base: { type: "string" }, sizes: { type: "string" }, rounds: { type: "string" } } });
if (!args.base) throw new Error("usage: bun bench/compare.ts --base <git ref> [--sizes 10000] [--rounds 3]");
const SIZES = (args.sizes ?? "10000").split(",").map(Number);
const ROUNDS = Number(args.rounds ?? 3);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 300);
const INGEST = Number(process.env.BENCH_INGEST ?? 300);
if (SIZES.some((n) => !Number.isInteger(n) || n < 1) || !Number.isInteger(ROUNDS) || ROUNDS < 1)
  throw new Error("--sizes: positive integers; --rounds: a positive integer");
const log = (line: string) => process.stderr.write(`[compare] ${line}\n`);

function git(...argv: string[]): string {
  const r = spawnSync(["git", ...argv], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${argv.join(" ")}: ${r.stderr.toString().trim()}`);
  return r.stdout.toString().trim();
}

const baseSha = git("rev-parse", "--verify", `${args.base}^{commit}`);
const headSha = git("rev-parse", "HEAD");
const dirty = git("status", "--porcelain", "--untracked-files=no").length > 0;
const scratch = mkdtempSync(join(tmpdir(), "memsvc-compare-"));
const baseRoot = join(scratch, "base");

let cleaned = false;
/** Removes the temporary worktree and homes; safe to call twice (finally, and a signal). */
function cleanup(): void {
  if (cleaned) return;
  cleaned = true;
  if (existsSync(baseRoot)) spawnSync(["git", "worktree", "remove", "--force", baseRoot], { cwd: ROOT, stdout: "ignore", stderr: "ignore" });
  spawnSync(["git", "worktree", "prune"], { cwd: ROOT, stdout: "ignore", stderr: "ignore" });
  rmSync(scratch, { recursive: true, force: true });
}
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    cleanup();
    process.exit(130);
  });
}

/**
 * Seeds `home` to `count` memories with the seeder of the checkout at `root`
 * (a child process: the base's store must have the base's schema).
 */
function seedWith(root: string, home: string, count: number): { seconds: number; total: number } {
  const script = join(scratch, `seed-${root === ROOT ? "head" : "base"}.ts`);
  writeFileSync(
    script,
    `import { seedStore } from ${JSON.stringify(join(root, "bench/lib/seed.ts"))};
import { NoteGenerator } from ${JSON.stringify(join(root, "bench/lib/corpus.ts"))};
import { pathsFor } from ${JSON.stringify(join(root, "src/config.ts"))};
const r = seedStore(pathsFor(process.argv[2]).db, new NoteGenerator(42), Number(process.argv[3]));
console.log(JSON.stringify({ seconds: r.seconds, total: r.total }));
`,
  );
  const r = spawnSync([process.execPath, script, home, String(count)], { cwd: root, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`seeding with ${root} failed:\n${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString().trim().split("\n").pop()!);
}

interface Round {
  round: number;
  load_average: number[];
  search_p50: number;
  search_p95: number;
  search_project_p50: number;
  search_cpu_ms: number;
  recall_index_p50: number;
  recall_index_p95: number;
  recall_index_cpu_ms: number;
  recall_index_main_thread_cpu_ms: number;
  recall_index_warm_p50: number;
  recall_index_warm_p95: number;
  recall_index_warm_cpu_ms: number;
  recall_index_warm_main_thread_cpu_ms: number;
  ingest_per_s: number;
  ingest_p50: number;
  rss_mb: number;
  start_to_first_200_ms: number;
  start_to_index_ready_ms: number;
}

/** One side, one round: its server up, the timed requests, the server down. */
async function round_(t: BenchTarget, n: number, queries: ReturnType<NoteGenerator["query"]>[], notes: NoteGenerator): Promise<Round> {
  const server = await startServer(t);
  try {
    const readyMs = await indexReady(server.url, server.startMs);
    const s = await timeSearch(server, queries);
    const r = await timeRecallIndex(server, queries);
    // The next 100 prompts: the same path once the first 100 have warmed its code (JIT) on this server.
    const w = await timeRecallIndex(server, queries, 100);
    const ingest = await timeIngest(server, notes, INGEST);
    return {
      round: n,
      load_average: loadavg().map((x) => round(x)),
      search_p50: s.search.latency_ms.p50,
      search_p95: s.search.latency_ms.p95,
      search_project_p50: s.search_project.latency_ms.p50,
      search_cpu_ms: s.search.server_cpu_ms_per_request,
      recall_index_p50: r.latency_ms.p50,
      recall_index_p95: r.latency_ms.p95,
      recall_index_cpu_ms: r.server_cpu_ms_per_request,
      recall_index_main_thread_cpu_ms: r.server_main_thread_cpu_ms_per_request ?? 0,
      recall_index_warm_p50: w.latency_ms.p50,
      recall_index_warm_p95: w.latency_ms.p95,
      recall_index_warm_cpu_ms: w.server_cpu_ms_per_request,
      recall_index_warm_main_thread_cpu_ms: w.server_main_thread_cpu_ms_per_request ?? 0,
      ingest_per_s: ingest.memories_per_s,
      ingest_p50: ingest.latency_ms.p50,
      rss_mb: memoryOf(server.pid).rss_mb,
      start_to_first_200_ms: server.startMs,
      start_to_index_ready_ms: readyMs,
    };
  } finally {
    await server.stop();
  }
}

const METRICS = [
  "search_p50",
  "search_p95",
  "search_project_p50",
  "search_cpu_ms",
  "recall_index_p50",
  "recall_index_p95",
  "recall_index_cpu_ms",
  "recall_index_main_thread_cpu_ms",
  "recall_index_warm_p50",
  "recall_index_warm_p95",
  "recall_index_warm_cpu_ms",
  "recall_index_warm_main_thread_cpu_ms",
  "ingest_per_s",
  "ingest_p50",
  "rss_mb",
  "start_to_first_200_ms",
  "start_to_index_ready_ms",
] as const;
const medians = (rounds: Round[]) =>
  Object.fromEntries(METRICS.map((k) => [k, round(median(rounds.map((r) => r[k])))])) as Record<(typeof METRICS)[number], number>;

async function main(): Promise<void> {
  const started = performance.now();
  const result: Record<string, unknown> = {
    bench: "compare",
    date: new Date().toISOString(),
    base: { ref: args.base, commit: baseSha },
    head: { commit: headSha, uncommitted_changes: dirty, root: ROOT },
    rounds: ROUNDS,
    order: "base then head in every round, each with its own server process and store; one client (this process)",
    machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version, load_average_at_start: loadavg().map((x) => round(x)) },
    queries: QUERIES,
    ingest_per_round: INGEST,
  };
  try {
    log(`worktree of ${args.base} (${baseSha.slice(0, 7)}) at ${baseRoot}`);
    git("worktree", "add", "--detach", baseRoot, baseSha);
    symlinkSync(realpathSync(join(ROOT, "node_modules")), join(baseRoot, "node_modules"));
    const queryGen = new NoteGenerator(7);
    const queries = Array.from({ length: QUERIES }, () => queryGen.query());
    const sizes: Record<string, unknown> = {};
    for (const size of SIZES) {
      const sides = { base: baseRoot, head: ROOT } as const;
      const targets = {} as Record<keyof typeof sides, BenchTarget>;
      const seeded: Record<string, unknown> = {};
      for (const [name, root] of Object.entries(sides) as [keyof typeof sides, string][]) {
        const home = mkdtempSync(join(scratch, `${name}-${size}-`));
        log(`${name}: seeding ${size} memories with its own seeder`);
        seeded[name] = seedWith(root, home, size);
        targets[name] = { engine: "sqlite", home, cmd: serverCommandAt(root) };
      }
      const rounds: Record<string, Round[]> = { base: [], head: [] };
      for (let n = 1; n <= ROUNDS; n++) {
        for (const name of ["base", "head"] as const) {
          log(`size ${size}, round ${n}/${ROUNDS}: ${name}`);
          // The same new notes for both sides in a round: each store grows alike.
          rounds[name].push(await round_(targets[name], n, queries, new NoteGenerator(1000 + n)));
        }
      }
      const base = medians(rounds.base);
      const head = medians(rounds.head);
      sizes[String(size)] = {
        seeded,
        median: { base, head },
        head_over_base: Object.fromEntries(METRICS.map((k) => [k, base[k] ? round(head[k] / base[k]) : null])),
        rounds,
      };
      log(`size ${size}: ${JSON.stringify(sizes[String(size)])}`);
    }
    result.sizes = sizes;
    result.load_average_at_end = loadavg().map((x) => round(x));
    result.seconds = Math.round((performance.now() - started) / 1000);
  } finally {
    cleanup();
  }
  const json = JSON.stringify(result, null, 2);
  mkdirSync(join(ROOT, "bench/results"), { recursive: true });
  writeFileSync(join(ROOT, "bench/results", `compare-${baseSha.slice(0, 7)}-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), `${json}\n`);
  console.log(json);
}

await main();
