/**
 * Where a /search's time goes at 100k, in process (`bun bench/search-cpu.ts
 * [--root <checkout>] [--size 100000] [--passes 3]`): that checkout's
 * searchWithReceipt (what GET /search calls) over the HTTP bench's 300
 * queries on a copy of a store seeded once per size under $TMPDIR (the HTTP
 * bench's seeder and corpus), with the server's full-text reader thread.
 * Each storage call search makes is timed in main-thread CPU (they are
 * synchronous underneath, except full text, whose query runs on the reader's
 * thread: its call is the planning, the thread's CPU is in by_thread), the
 * receipts' writing is timed by flushing after each search, and the rest of
 * searchWithReceipt is the JavaScript around them (words, query vector,
 * fusion, graph hop, ranking, views). CPU, not wall time: on a shared
 * machine wall time measures the neighbours. Reports the median and mean per
 * search of each phase, and each thread's CPU per search.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { dlopen, FFIType, ptr } from "bun:ffi";

// This thread's CPU time (clock_gettime(CLOCK_THREAD_CPUTIME_ID)): wall time on a shared machine says little.
const libc = dlopen("libc.so.6", { clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
const ts = new BigInt64Array(2);
const tsPtr = ptr(ts);
const threadMs = () => {
  libc.symbols.clock_gettime(3, tsPtr);
  return Number(ts[0]) * 1000 + Number(ts[1]) / 1e6;
};
/** CPU ms of each thread of this process so far, by name (10 ms ticks). */
function threads(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${t}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const name = t === String(process.pid) ? "main" : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/\d+$/, "#");
      out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) * 10;
    } catch {
      /* gone */
    }
  }
  return out;
}

const { values: args } = parseArgs({
  options: { root: { type: "string" }, size: { type: "string" }, passes: { type: "string" }, receipts: { type: "string" } },
});
const ROOT = resolve(args.root ?? join(import.meta.dir, ".."));
const SIZE = Number(args.size ?? 100_000);
const PASSES = Number(args.passes ?? 3);
const seeded = join(tmpdir(), `memsvc-search-cpu-${SIZE}`);
const at = (p: string) => import(join(ROOT, p));
const { NoteGenerator } = await at("bench/lib/corpus.ts");
if (!existsSync(join(seeded, "done"))) {
  const { seedStore } = await at("bench/lib/seed.ts");
  mkdirSync(seeded, { recursive: true });
  process.stderr.write(`seeding ${SIZE} memories into ${seeded} (minutes)\n`);
  seedStore(join(seeded, "memsvc.db"), new NoteGenerator(42), SIZE);
  writeFileSync(join(seeded, "done"), "");
}
const home = mkdtempSync(join(tmpdir(), "memsvc-search-cpu-"));
copyFileSync(join(seeded, "memsvc.db"), join(home, "memsvc.db"));
if (args.receipts === "off") writeFileSync(join(home, "config.json"), JSON.stringify({ recall: { receipts: false } }));
const { loadConfig } = await at("src/config.ts");
const { createServices } = await at("src/core/services.ts");
const { openStorage } = await at("src/store/open.ts");
const { FallbackEmbedder } = await at("src/embed/index.ts");
const { searchWithReceipt, flushReceipts } = await at("src/core/receipts/index.ts");
const quiet = () => {};
const config = loadConfig({ MEMSVC_HOME: home, MEMSVC_OFFLINE: "1" });
const s = createServices(config, openStorage(config, { ftsReader: quiet }), { embedder: new FallbackEmbedder(), log: quiet });
try {
  // A ref'd handle, as the server's listening socket: with none, Bun's event loop spins while it
  // waits for the full-text reader's answer (that CPU lands on this thread; measured, not in a server).
  const keepAlive = setInterval(() => {}, 60_000);
  await s.indexState.ready;
  if (process.env.SETTLE) await Bun.sleep(Number(process.env.SETTLE));
  const phases = new Map<string, number>();
  const add = (name: string, ms: number) => phases.set(name, (phases.get(name) ?? 0) + ms);
  const wrap = (obj: Record<string, any>, name: string, label: string, overlapped = false) => {
    const fn = obj[name].bind(obj);
    obj[name] = (...a: unknown[]) => {
      const t = threadMs();
      const out = fn(...a);
      const sync = threadMs() - t;
      if (!(out instanceof Promise)) {
        add(label, sync);
        return out;
      }
      // Synchronous underneath but for full text, whose query runs on the reader's thread: its call is the planning.
      add(overlapped ? `${label} (plan)` : label, sync);
      return out;
    };
  };
  const search = s.storage.search as Record<string, any>;
  wrap(search, "fullText", "full text", true);
  wrap(search, "nearest", "vector");
  for (const m of ["scoringRows", "neighbours", "documentFrequency"]) wrap(search, m, `sql ${m}`);
  const memories = s.storage.memories as Record<string, any>;
  for (const m of ["memoriesBySeq", "staleMarks"]) wrap(memories, m, `sql ${m}`);
  if (s.embedder.embedWeighted) wrap(s.embedder as Record<string, any>, "embedWeighted", "embed");
  // Temporary laps placed in the code under study (globalThis.__lap?.(name)): CPU since the previous lap.
  let last = 0;
  const laps = new Map<string, number>();
  (globalThis as any).__lap = (name: string) => {
    const t = threadMs();
    laps.set(name, (laps.get(name) ?? 0) + t - last);
    last = t;
  };
  const gen = new NoteGenerator(7);
  const queries = Array.from({ length: 300 }, () => gen.query());
  const run = (q: { query: string; project?: string | null }) =>
    searchWithReceipt(s, { query: q.query, ...(q.project ? { project: q.project } : {}) }, { via: "rest", agent: null });
  for (const q of queries) {
    await run(q);
    await flushReceipts(s);
  }
  const per = new Map<string, number[]>();
  const push = (k: string, v: number) => per.set(k, [...(per.get(k) ?? []), v]);
  let cpu = 0;
  let n = 0;
  const load = [loadavg()[0]];
  const before = threads();
  for (let p = 0; p < PASSES; p++) {
    for (const q of queries) {
      phases.clear();
      laps.clear();
      const c0 = process.cpuUsage();
      const t = threadMs();
      last = t;
      await run(q);
      const total = threadMs() - t;
      const t2 = threadMs();
      last = t2;
      await flushReceipts(s);
      const receipts = threadMs() - t2;
      const c = process.cpuUsage(c0);
      cpu += (c.user + c.system) / 1000;
      n++;
      let known = 0;
      for (const [k, v] of phases) {
        push(k, v);
        known += v;
      }
      for (const [k, v] of laps) push(`lap ${k}`, v);
      push("search total", total);
      push("other JS (words, fusion, graph hop, ranking, views)", total - known);
      push("receipt write (flush)", receipts);
    }
  }
  const after = threads();
  // The full-text query alone, on this thread (it runs on the reader's otherwise): its spread per query.
  const { queryKeywords } = await at("src/core/search/query.ts");
  const { SEARCH_CANDIDATES } = await at("src/core/search/tuning.ts");
  const sync = s.storage.search.sync;
  if (sync) {
    for (const q of queries) {
      const t = threadMs();
      sync.fullText(queryKeywords(q.query), q.project ?? null, SEARCH_CANDIDATES);
      push(q.project ? "full text query alone (project)" : "full text query alone (unfiltered)", threadMs() - t);
    }
  }
  load.push(loadavg()[0]);
  const byThread: Record<string, number> = {};
  for (const k of Object.keys(after)) if (after[k] - (before[k] ?? 0) > 0) byThread[k] = Math.round(((after[k] - (before[k] ?? 0)) / n) * 100) / 100;
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  // Per search (a phase some searches skip counts 0 for them), except the full-text spread (per query).
  const mean = (xs: number[], k: string) => xs.reduce((a, b) => a + b, 0) / (k.startsWith("full text query alone") ? xs.length : n);
  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)];
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  const out: Record<string, { median: number; p90: number; p95: number; mean: number }> = {};
  for (const [k, xs] of per) out[k] = { median: r3(med(xs)), p90: r3(pct(xs, 0.9)), p95: r3(pct(xs, 0.95)), mean: r3(mean(xs, k)) };
  console.log(
    JSON.stringify(
      { root: ROOT, size: SIZE, searches: n, process_cpu_ms_per_search: Math.round((cpu / n) * 100) / 100, by_thread: byThread, main_thread_cpu_ms: out, load },
      null,
      1,
    ),
  );
  clearInterval(keepAlive);
} finally {
  await s.close();
  rmSync(home, { recursive: true, force: true });
}
