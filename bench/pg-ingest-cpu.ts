/**
 * Where an ingest's CPU goes on PostgreSQL: POST /ingest over HTTP into a
 * server over an existing schema (a store the HTTP bench kept, or one
 * `memsvc migrate` filled), counting the CPU of every process involved from
 * /proc (the memsvc server, and every process of the PostgreSQL cluster:
 * backends, WAL writer, checkpointer, autovacuum) and what each statement cost
 * in the database (pg_stat_statements, reset before each phase: calls, total
 * and mean execution time, buffers, WAL).
 *
 *   bun bench/pg-ingest-cpu.ts <postgres url> <schema> [--ingest 600] [--clients 1,8] [--seed 7] [--checkout <dir>] [--search 200] [--warmup 100]
 *
 * CPU-seconds per 1,000 ingests over all processes is the figure a shared
 * machine cannot inflate much (wall time it can): it says what two idle cores
 * could do, 2,000 / it ingests a second at most. The cluster must run on this
 * machine (its postmaster's children are read from /proc) and serve nothing
 * else meanwhile; pg_stat_statements must be in shared_preload_libraries and
 * created in the database for the per-statement part (skipped otherwise).
 * Each run adds its memories to the schema: compare checkouts on copies of
 * one database (CREATE DATABASE ... TEMPLATE).
 *
 * --search N adds the bench's two-servers phase with the same accounting:
 * N searches with 8 clients on one server, then 4 on each of two servers over
 * the schema at once, and the CPU of every process of it (this client
 * included) over the phase's wall time over 2 cores: near 1, the one server's
 * phase already keeps both cores busy and a second server cannot add throughput here.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { SQL } from "bun";
import { NoteGenerator } from "./lib/corpus";
import { startServer, timeConcurrentSearch } from "./lib/http-run";
import { ingestOverHttp } from "./lib/load";
import { cpuMsOf, ROOT, serverCommandAt, sumOverTree } from "./lib/server";
import { round } from "./lib/stats";

const args = process.argv.slice(2);
const flag = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const [url, schema] = args;
if (!url || !schema || !/^[a-z_][a-z0-9_]*$/.test(schema)) {
  console.error(
    "usage: bun bench/pg-ingest-cpu.ts <postgres url> <schema> [--ingest 600] [--clients 1,8] [--seed 7] [--checkout <dir>] [--search N] [--warmup 100]",
  );
  process.exit(2);
}
const INGEST = Number(flag("ingest", "600"));
const SEARCH = Number(flag("search", "0"));
const CLIENTS = flag("clients", "1,8").split(",").map(Number);
const checkout = resolve(flag("checkout", ROOT));
const log = (line: string) => console.error(`[pg-ingest-cpu] ${line}`);

/** CPU (user + system, ms) of the postmaster and every process it forked. */
function clusterCpuMs(postmaster: number): { ms: number; processes: number } {
  const { total, processes } = sumOverTree(postmaster, cpuMsOf);
  return { ms: total, processes };
}

const sql = new SQL({ url, max: 1, prepare: false });
const [{ dir }] = await sql.unsafe("SELECT current_setting('data_directory') AS dir");
const postmaster = Number(readFileSync(join(dir, "postmaster.pid"), "utf8").split("\n")[0]);
const statements = (await sql.unsafe("SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'")).length > 0;
// The schema's tables and indexes into shared buffers first (pg_prewarm, when it can be created): a
// database copied from a template starts cold, and reading the HNSW graph in would count as ingest CPU.
try {
  await sql.unsafe("CREATE EXTENSION IF NOT EXISTS pg_prewarm");
  await sql.unsafe(
    `SELECT pg_prewarm(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = '${schema}' AND c.relkind IN ('r', 'i')`,
  );
} catch (e) {
  log(`no pg_prewarm: ${(e as Error).message}`);
}
const home = mkdtempSync(join(tmpdir(), "memsvc-pg-ingest-cpu-"));
const server = await startServer({ engine: "postgres", home, cmd: serverCommandAt(checkout), pg: { url, schema } });
const gen = new NoteGenerator(Number(flag("seed", "7")));
const load = () => loadavg().map((x) => round(x));

const phases: Record<string, unknown>[] = [];
/** CPU (s) of this process (the HTTP clients), the servers and the cluster while `run` runs, over its wall time. */
async function accounted<T>(pids: number[], run: () => Promise<T>) {
  const c0 = process.cpuUsage();
  const s0 = pids.map(cpuMsOf);
  const p0 = clusterCpuMs(postmaster).ms;
  const t0 = performance.now();
  const out = await run();
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  const cpu = {
    clients: round((c.user + c.system) / 1e6, 2),
    memsvc: round(pids.reduce((a, p, i) => a + cpuMsOf(p) - s0[i], 0) / 1000, 2),
    postgres: round((clusterCpuMs(postmaster).ms - p0) / 1000, 2),
  };
  return { out, wall_s: round(wall, 2), cpu_s: cpu, two_core_share: round((cpu.clients + cpu.memsvc + cpu.postgres) / wall / 2, 2) };
}
try {
  if (SEARCH > 0) {
    const qs = Array.from({ length: SEARCH }, () => gen.query());
    await timeConcurrentSearch(server, qs.slice(0, 40), 8);
    const loadBefore = load();
    const one = await accounted([server.pid], () => timeConcurrentSearch(server, qs, 8));
    const home2 = mkdtempSync(join(tmpdir(), "memsvc-pg-ingest-cpu-2-"));
    const second = await startServer({ engine: "postgres", home: home2, cmd: serverCommandAt(checkout), pg: { url, schema } });
    try {
      await timeConcurrentSearch(second, qs.slice(0, 40), 4);
      const two = await accounted([server.pid, second.pid], () => Promise.all([timeConcurrentSearch(server, qs, 4), timeConcurrentSearch(second, qs, 4)]));
      const phase = {
        search: SEARCH,
        one_server: { requests_per_s: round(SEARCH / one.wall_s), wall_s: one.wall_s, cpu_s: one.cpu_s, two_core_share: one.two_core_share },
        two_servers: { requests_per_s: round((2 * SEARCH) / two.wall_s), wall_s: two.wall_s, cpu_s: two.cpu_s, two_core_share: two.two_core_share },
        ratio: round((2 * SEARCH) / two.wall_s / (SEARCH / one.wall_s)),
        load_average: { before: loadBefore, after: load() },
      };
      log(JSON.stringify(phase));
      phases.push(phase);
    } finally {
      await second.stop();
      rmSync(home2, { recursive: true, force: true });
    }
  }
  // A fresh server warms its word counts (a count(*) per common word: seconds of database CPU at
  // 100k) in the background: measured alongside, they would count as ingest CPU. Wait until the
  // server and the cluster are idle (under 5 % of a core for two seconds in a row, at most 3 minutes).
  const quietFrom = performance.now();
  for (let still = 0; still < 2 && performance.now() - quietFrom < 180_000; ) {
    const a = cpuMsOf(server.pid) + clusterCpuMs(postmaster).ms;
    await Bun.sleep(1000);
    still = cpuMsOf(server.pid) + clusterCpuMs(postmaster).ms - a < 50 ? still + 1 : 0;
  }
  log(`server and database idle after ${round((performance.now() - quietFrom) / 1000, 1)} s`);
  // Warm-up (connections opened, code compiled), not counted.
  await ingestOverHttp(
    server.url,
    Array.from({ length: Number(flag("warmup", "100")) }, () => gen.note()),
    8,
  );
  for (const clients of CLIENTS) {
    const notes = Array.from({ length: INGEST }, () => gen.note());
    if (statements) await sql.unsafe("SELECT pg_stat_statements_reset()");
    const loadBefore = load();
    const s0 = cpuMsOf(server.pid);
    const p0 = clusterCpuMs(postmaster);
    const t0 = performance.now();
    const figures = await ingestOverHttp(server.url, notes, clients);
    const wall = (performance.now() - t0) / 1000;
    const serverS = (cpuMsOf(server.pid) - s0) / 1000;
    const pgS = (clusterCpuMs(postmaster).ms - p0.ms) / 1000;
    const per1000 = ((serverS + pgS) / INGEST) * 1000;
    const top = statements
      ? ((await sql.unsafe(
          `SELECT calls::float8 AS calls, round(total_exec_time::numeric, 1)::float8 AS total_ms, round(total_plan_time::numeric, 1)::float8 AS plan_ms, round(mean_exec_time::numeric, 3)::float8 AS mean_ms,
                  rows::float8 AS rows, (shared_blks_hit + shared_blks_read)::float8 AS buffers, shared_blks_dirtied::float8 AS dirtied,
                  wal_records::float8 AS wal_records, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query
             FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
            ORDER BY total_exec_time DESC LIMIT 14`,
        )) as Record<string, unknown>[])
      : null;
    const phase = {
      clients,
      memories: INGEST,
      wall_s: round(wall, 1),
      memories_per_s: figures.memories_per_s,
      latency_ms: figures.latency_ms,
      cpu_s: { memsvc: round(serverS, 2), postgres: round(pgS, 2), postgres_processes: p0.processes },
      cpu_s_per_1000_ingests: { all: round(per1000, 2), memsvc: round((serverS / INGEST) * 1000, 2), postgres: round((pgS / INGEST) * 1000, 2) },
      /** CPU of all processes over wall time over 2 cores: 1 is both cores busy with this run alone. */
      two_core_share: round((serverS + pgS) / wall / 2, 2),
      load_average: { before: loadBefore, after: load() },
      statements: top,
    };
    log(JSON.stringify({ ...phase, statements: undefined }));
    phases.push(phase);
  }
} finally {
  await server.stop();
  await sql.close();
  rmSync(home, { recursive: true, force: true });
}
console.log(JSON.stringify({ url: url.replace(/:[^:@/]*@/, ":***@"), schema, checkout, phases }, null, 2));
