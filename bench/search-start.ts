/**
 * A fresh server's first /search requests at 100k, request by request
 * (`bun bench/search-start.ts [--db <seeded store>] [--settle ms] [--pings ms]
 * [--fresh 8] [--binary]`): what `bun run bench`'s first /search pass meets,
 * taken apart. A copy of a seeded store (the HTTP bench's seeder and corpus,
 * seeded once under $TMPDIR as bench/search-cpu.ts does; no index file, so
 * the index loads from vec0 as at the bench's first start), a real server
 * process, /health polled until `index: ready`, a static file every 5 ms for
 * --pings ms (3000: the bench's start-up watch), --settle ms with no traffic,
 * then passes of one sequential client, each 20 untimed + 300 timed searches:
 *   first   the HTTP bench's 300 queries (NoteGenerator 7), the bench's first pass
 *   second  the same queries again (words counted, rows read, code compiled)
 *   fresh   once the server logged the end of its start-up work (the search
 *           warm-up's debug line, and the calibration's on a store never
 *           calibrated): 300 queries it never saw (NoteGenerator --fresh)
 *   fresh_again  those again
 * --fresh-first runs `fresh` before `first` (the code compiled by then, the
 * bench's words still unseen); --other-first <path> sends 320 requests to
 * another route first (the HTTP layer compiled, search's own code not).
 * Per request: wall time, and the server's CPU from /proc (schedstat, ns):
 * the main thread's run time and its wait for a CPU (runnable, not running),
 * the other threads' run time. Per pass: latency p50/p95/p99, CPU means, and
 * the pass's window in ms after `index: ready`; the server's log lines after
 * ready (start-up work), in ms after ready. The passes' requests line up with
 * each other query by query: `excess_main_cpu` is a first-pass request's main
 * CPU over the same query's in the second pass.
 * The environment passes to the server (MEMSVC_* settings); its log is at debug level.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { NoteGenerator, type Query } from "./lib/corpus";
import { searchPath } from "./lib/load";
import { seedStore } from "./lib/seed";
import { ROOT, serverCommand, spawnServer, type RunningServer } from "./lib/server";
import { round, summarize } from "./lib/stats";

const { values: args } = parseArgs({
  options: {
    db: { type: "string" },
    settle: { type: "string" },
    pings: { type: "string" },
    fresh: { type: "string" },
    binary: { type: "boolean" },
    size: { type: "string" },
    "wait-start-work": { type: "string" },
    "fresh-first": { type: "boolean" },
    "other-first": { type: "string" },
  },
});
const SIZE = Number(args.size ?? 100_000);
const SETTLE = Number(args.settle ?? 0);
const PINGS = Number(args.pings ?? 3000);
const FRESH_SEED = Number(args.fresh ?? 8);
const WAIT_START_WORK = Number(args["wait-start-work"] ?? 60_000);
const log = (line: string) => process.stderr.write(`[search-start] ${line}\n`);

function seeded(): string {
  if (args.db) return args.db;
  const dir = join(tmpdir(), `memsvc-search-cpu-${SIZE}`);
  if (!existsSync(join(dir, "done"))) {
    mkdirSync(dir, { recursive: true });
    log(`seeding ${SIZE} memories into ${dir} (minutes)`);
    seedStore(join(dir, "memsvc.db"), new NoteGenerator(42), SIZE);
    writeFileSync(join(dir, "done"), "");
  }
  return join(dir, "memsvc.db");
}

/** Run time and run-queue wait (ns) of one thread, from /proc/<pid>/task/<tid>/schedstat. */
function schedstat(pid: number, tid: number | string): [number, number] {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ").map(Number);
    return [run, wait];
  } catch {
    return [0, 0];
  }
}

/** Run time (ns) of all the process's threads together. */
function allThreadsNs(pid: number): number {
  let sum = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) sum += schedstat(pid, t)[0];
  return sum;
}

/** Run time (ms) by thread name (digits dropped: one line per kind of thread). */
function byThread(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    let name = "main";
    if (t !== String(pid)) {
      try {
        name = readFileSync(`/proc/${pid}/task/${t}/comm`, "utf8").trim().replace(/\d+$/, "#");
      } catch {
        continue;
      }
    }
    out[name] = (out[name] ?? 0) + schedstat(pid, t)[0] / 1e6;
  }
  return out;
}

interface Sample {
  query: string;
  project: string | null;
  /** ms after index ready. */
  at: number;
  wall: number;
  main_cpu: number;
  main_wait: number;
  other_cpu: number;
}

async function pass(
  server: RunningServer,
  readyEpoch: number,
  queries: Query[],
  warmup = 20,
): Promise<{ samples: Sample[]; warm: number[]; threads: Record<string, number> }> {
  const get = async (q: Query): Promise<Sample> => {
    const [run0, wait0] = schedstat(server.pid, server.pid);
    const all0 = allThreadsNs(server.pid);
    const at = Date.now() - readyEpoch;
    const t = performance.now();
    const res = await fetch(server.url + searchPath(q));
    await res.arrayBuffer();
    const wall = performance.now() - t;
    if (res.status !== 200) throw new Error(`GET /search: ${res.status}`);
    const [run1, wait1] = schedstat(server.pid, server.pid);
    const all1 = allThreadsNs(server.pid);
    return {
      query: q.query,
      project: q.project ?? null,
      at,
      wall,
      main_cpu: (run1 - run0) / 1e6,
      main_wait: (wait1 - wait0) / 1e6,
      other_cpu: (all1 - all0 - (run1 - run0)) / 1e6,
    };
  };
  const warm: number[] = [];
  for (const q of queries.slice(0, warmup)) warm.push((await get(q)).wall);
  const before = byThread(server.pid);
  const samples: Sample[] = [];
  for (const q of queries) samples.push(await get(q));
  const after = byThread(server.pid);
  const threads: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = round((v - (before[k] ?? 0)) / queries.length, 3);
    if (d > 0) threads[k] = d;
  }
  return { samples, warm, threads };
}

function describe(p: Awaited<ReturnType<typeof pass>>, against?: Sample[]) {
  const s = p.samples;
  const mean = (xs: number[]) => round(xs.reduce((a, b) => a + b, 0) / (xs.length || 1), 3);
  const out: Record<string, unknown> = {
    window_ms_after_ready: [s[0].at, Math.round(s[s.length - 1].at + s[s.length - 1].wall)],
    latency_ms: summarize(s.map((x) => x.wall)),
    unfiltered_ms: summarize(s.filter((x) => !x.project).map((x) => x.wall)),
    project_ms: summarize(s.filter((x) => x.project).map((x) => x.wall)),
    warmup_ms: summarize(p.warm),
    main_cpu_ms: summarize(
      s.map((x) => x.main_cpu),
      3,
    ),
    main_wait_ms_mean: mean(s.map((x) => x.main_wait)),
    other_threads_cpu_ms_mean: mean(s.map((x) => x.other_cpu)),
    by_thread_cpu_ms_per_request: p.threads,
  };
  if (against) {
    const excess = s.map((x, i) => x.main_cpu - against[i].main_cpu);
    out.excess_main_cpu_ms = summarize(excess, 3);
    // The slowest 5 %: what they spent above their own query's second-pass cost, and where.
    const slow = s
      .map((x, i) => ({ ...x, excess: excess[i], second_wall: against[i].wall }))
      .sort((a, b) => b.wall - a.wall)
      .slice(0, Math.ceil(s.length / 20));
    out.slowest_5pct = slow.map((x) => ({
      at: Math.round(x.at),
      wall: round(x.wall),
      second_wall: round(x.second_wall),
      main_cpu: round(x.main_cpu),
      excess_main_cpu: round(x.excess),
      main_wait: round(x.main_wait),
      other_cpu: round(x.other_cpu),
      project: x.project !== null,
    }));
  }
  return out;
}

const db = seeded();
const home = mkdtempSync(join(tmpdir(), "memsvc-search-start-"));
copyFileSync(db, join(home, "memsvc.db"));
const load: number[][] = [loadavg().map((x) => round(x))];
const server = await spawnServer(home, serverCommand(args.binary ? "binary" : "source"), 120_000, { MEMSVC_LOG: "debug" });
try {
  for (;;) {
    const h = (await (await fetch(`${server.url}/health`)).json()) as { index?: string };
    if (h.index === undefined || h.index === "ready") break;
    await Bun.sleep(5);
  }
  const readyEpoch = Date.now();
  const pingsUntil = performance.now() + PINGS;
  while (performance.now() < pingsUntil) {
    await (await fetch(`${server.url}/favicon.svg`)).arrayBuffer();
    await Bun.sleep(5);
  }
  if (SETTLE > 0) await Bun.sleep(SETTLE);
  const queryGen = new NoteGenerator(7);
  const queries = Array.from({ length: 300 }, () => queryGen.query());
  const freshGen = new NoteGenerator(FRESH_SEED);
  const fresh = Array.from({ length: 300 }, () => freshGen.query());
  // --fresh-first: the fresh queries before the bench's (the code then compiled, the bench's words still unseen).
  // --other-first <path>: 320 requests to another route first (what compiling the HTTP layer costs, apart from search's own code).
  if (args["other-first"]) for (let i = 0; i < 320; i++) await (await fetch(server.url + args["other-first"])).arrayBuffer();
  const before = args["fresh-first"] ? await pass(server, readyEpoch, fresh) : null;
  const first = await pass(server, readyEpoch, queries);
  const second = await pass(server, readyEpoch, queries);
  // The start-up work's end: the search warm-up's line, and the calibration's (a store never calibrated is measured at its first start).
  const waitUntil = performance.now() + WAIT_START_WORK;
  const pending = () => {
    const lines = server.log?.() ?? "";
    return [
      ...(/search: warmed up|search: warm-up stopped/.test(lines) ? [] : ["warm-up"]),
      ...(/calibrated |calibration of |calibration failed|or calibration stopped/.test(lines) ? [] : ["calibration"]),
    ];
  };
  while (pending().length > 0 && performance.now() < waitUntil) await Bun.sleep(100);
  await Bun.sleep(500);
  const third = before ?? (await pass(server, readyEpoch, fresh));
  const fourth = await pass(server, readyEpoch, fresh);
  load.push(loadavg().map((x) => round(x)));
  const timeline = (server.log?.() ?? "")
    .split("\n")
    .map((l) => /^(\S+Z) \w+\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => ({ at: Date.parse(m[1]) - readyEpoch, line: m[2].slice(0, 140) }))
    .filter((x) => x.at >= -2000 && !/^(GET|POST) /.test(x.line));
  const out = {
    bench: "search-start",
    date: new Date().toISOString(),
    root: ROOT,
    server: args.binary ? "binary" : "source",
    pings_ms: PINGS,
    settle_ms: SETTLE,
    fresh_first: !!before,
    load_average: load,
    still_running_at_fresh: pending(),
    first: describe(first, second.samples),
    second: describe(second),
    fresh: describe(third, fourth.samples),
    fresh_again: describe(fourth),
    timeline,
  };
  const json = JSON.stringify(out, null, 2);
  mkdirSync(join(ROOT, "bench/results"), { recursive: true });
  writeFileSync(join(ROOT, "bench/results", `search-start-${out.date.replace(/[:.]/g, "-")}.json`), `${json}\n`);
  console.log(json);
} finally {
  await server.stop();
  rmSync(home, { recursive: true, force: true });
}
