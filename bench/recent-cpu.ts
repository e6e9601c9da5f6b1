/**
 * The SQLite /recent store call, in process (`bun bench/recent-cpu.ts --db <store>
 * [--impl <module>] [--iters 300] [--limit 12] [--now <ms>]`): the function the
 * route's storage calls (walkTouched) in a loop over an already seeded store
 * (bench/lib/seed.ts; seed once and reuse the file, 200k takes minutes), with
 * and without a project (projects in turn), each call checked against scoreAll
 * first. Reports p50/p95 of wall time and of process CPU time per call
 * (process.cpuUsage: what a loaded shared machine inflates least) and the load
 * average. `--impl` times another checkout's src/store/sqlite/search-recent.ts
 * on the same file (the before figure). `--now` defaults to a minute after the
 * newest memory, as a bench server right after seeding sees it. Prints JSON.
 */
import { Database } from "bun:sqlite";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { scoreAll } from "../src/store/sqlite/search-recent";

const { values: args } = parseArgs({
  options: { db: { type: "string" }, impl: { type: "string" }, iters: { type: "string" }, limit: { type: "string" }, now: { type: "string" } },
});
if (!args.db) throw new Error("--db <seeded store file>");
const ITERS = Number(args.iters ?? 300);
const LIMIT = Number(args.limit ?? 12);
const impl = await import(resolve(args.impl ?? `${import.meta.dir}/../src/store/sqlite/search-recent.ts`));
const walk: (db: Database, p: { now: number; project: string | null; limit: number }) => { id: string }[] = impl.walkTouched;

const db = new Database(args.db, { readonly: true });
const now = Number(args.now ?? db.query<{ t: number }, []>("SELECT max(max(created_at, refreshed_at)) + 60000 AS t FROM memories").get()!.t);
const projects = db
  .query<{ project: string }, []>("SELECT DISTINCT project FROM memories WHERE project IS NOT NULL ORDER BY project")
  .all()
  .map((r) => r.project);

const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const round = (x: number) => Math.round(x * 100) / 100;

function run(label: string, projectOf: (i: number) => string | null) {
  // Exactness first, on every project the loop will ask for.
  for (let i = 0; i < Math.min(ITERS, projects.length + 1); i++) {
    const p = { now, project: projectOf(i), limit: LIMIT };
    const got = walk(db, p)
      .map((r) => r.id)
      .join();
    if (
      got !==
      scoreAll(db, p)
        .map((r) => r.id)
        .join()
    )
      throw new Error(`${label}: differs from scoreAll for ${JSON.stringify(p)}`);
  }
  for (let i = 0; i < 20; i++) walk(db, { now, project: projectOf(i), limit: LIMIT });
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < ITERS; i++) {
    const p = { now, project: projectOf(i), limit: LIMIT };
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    walk(db, p);
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return {
    label,
    wall_ms: { p50: round(pct(wall, 0.5)), p95: round(pct(wall, 0.95)) },
    cpu_ms: { p50: round(pct(cpu, 0.5)), p95: round(pct(cpu, 0.95)), mean: round(cpu.reduce((a, b) => a + b, 0) / cpu.length) },
  };
}

const load_before = loadavg().map(round);
const all = run("no project", () => null);
const one = run("project", (i) => projects[i % projects.length]);
console.log(
  JSON.stringify({
    db: args.db,
    impl: args.impl ?? "this checkout",
    memories: db.query("SELECT count(*) AS n FROM memories").get(),
    now,
    limit: LIMIT,
    iters: ITERS,
    load_before,
    results: [all, one],
    load_after: loadavg().map(round),
  }),
);
