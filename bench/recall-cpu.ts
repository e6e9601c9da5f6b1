/**
 * CPU per /recall-index call, in process (`bun bench/recall-cpu.ts [--root <checkout>]
 * [--size 10000] [--iters 2000] [--mode new|same]`). Issue 17 wants the SQLite
 * path within noise of 4d5fbbe; over HTTP on a loaded 2-core machine a 0.3 ms
 * difference drowns, so this times the function the route calls
 * (recallIndex: parse, embed with the fallback embedder as `MEMSVC_OFFLINE=1`
 * servers do, session state, retrieval, gates, claiming picks) in a loop and
 * reports process CPU time per call (process.cpuUsage), not wall time.
 *
 * `--root` runs another checkout's code (e.g. a `git worktree` of 4d5fbbe with
 * node_modules symlinked): its seeder, its schema, its recallIndex. The seeded
 * store is built once per checkout under $TMPDIR and copied fresh for each run,
 * so every run starts from the same rows. `--mode new` opens a new session per
 * prompt (what bench/lib/http-run.ts does); `--mode same` is one session's
 * turns (suppression and topic in play). Prints one JSON line.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: { root: { type: "string" }, size: { type: "string" }, iters: { type: "string" }, mode: { type: "string" }, rounds: { type: "string" } },
});
const ROOT = resolve(args.root ?? join(import.meta.dir, ".."));
const SIZE = Number(args.size ?? 10_000);
const ITERS = Number(args.iters ?? 2000);
const ROUNDS = Number(args.rounds ?? 3);
const MODE = args.mode ?? "new";
if (MODE !== "new" && MODE !== "same") throw new Error("--mode: new or same");

const { loadConfig, pathsFor } = await import(join(ROOT, "src/config.ts"));
const { createServices } = await import(join(ROOT, "src/core/services.ts"));
const { openStorage } = await import(join(ROOT, "src/store/open.ts"));
const { silentLogger } = await import(join(ROOT, "src/core/log.ts"));
const { FallbackEmbedder } = await import(join(ROOT, "src/embed"));
const { recallIndex } = await import(join(ROOT, "src/core/recall"));
const { seedStore } = await import(join(ROOT, "bench/lib/seed.ts"));
const { NoteGenerator } = await import(join(ROOT, "bench/lib/corpus.ts"));

// One pristine seeded store per checkout (the key is the checkout's HEAD tree of seed + schema, roughly: its path).
const seeded = join(tmpdir(), `memsvc-recall-cpu-${Bun.hash(ROOT).toString(16)}-${SIZE}`);
if (!existsSync(join(seeded, "done"))) {
  rmSync(seeded, { recursive: true, force: true });
  mkdirSync(seeded, { recursive: true });
  seedStore(pathsFor(seeded).db, new NoteGenerator(42), SIZE);
  // The seeder's WAL is checkpointed by its close; the copy below takes the main file only.
  Bun.write(join(seeded, "done"), "");
}

const home = mkdtempSync(join(tmpdir(), "memsvc-recall-cpu-run-"));
try {
  mkdirSync(pathsFor(home).db.replace(/\/[^/]+$/, ""), { recursive: true });
  copyFileSync(pathsFor(seeded).db, pathsFor(home).db);
  const config = loadConfig({ MEMSVC_HOME: home, MEMSVC_OFFLINE: "1" });
  const s = createServices(config, openStorage(config), { embedder: new FallbackEmbedder(), log: silentLogger });
  await s.indexState.ready;
  const gen = new NoteGenerator(7);
  const prompts = Array.from({ length: 300 }, () => gen.query());
  let n = 0;
  const call = (i: number) => {
    const q = prompts[i % prompts.length];
    return recallIndex(s, { session_id: MODE === "new" ? `s-${n++}` : "one", prompt: q.query, project: q.project ?? null });
  };
  for (let i = 0; i < 300; i++) await call(i);
  const rounds: { cpu_us: number; wall_us: number }[] = [];
  let blocks = 0;
  for (let r = 0; r < ROUNDS; r++) {
    Bun.gc(true);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < ITERS; i++) {
      const res = (await call(i)) as { block?: string | null };
      if (res.block) blocks++;
    }
    const c = process.cpuUsage(c0);
    rounds.push({ cpu_us: Math.round((c.user + c.system) / ITERS), wall_us: Math.round(((performance.now() - t0) * 1000) / ITERS) });
  }
  await s.close();
  const cpu = rounds.map((r) => r.cpu_us).sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      root: ROOT,
      size: SIZE,
      iters: ITERS,
      mode: MODE,
      cpu_us_per_call_median: cpu[Math.floor(cpu.length / 2)],
      rounds,
      load_average: loadavg().map((x) => Math.round(x * 100) / 100),
      blocks,
    }),
  );
} finally {
  rmSync(home, { recursive: true, force: true });
}
