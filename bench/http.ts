/**
 * HTTP foundation benchmark (`bun run bench [--sizes 10000,100000,200000]
 * [--engine sqlite|postgres|both]`): a real server process on loopback, a
 * store seeded to each size in turn, and this process as the only client. At
 * each size: start to first /health 200 and to `index: ready`, /search and
 * /recent latency with and without a project, /recall-index, /search with 4
 * clients at once, ingest over HTTP, server RSS, the same plain SQL on the
 * database itself (an engine reference), and vector recall@10 against exact
 * cosine. Prints one JSON object (also written to bench/results/).
 *
 * Env: BENCH_SIZES (or --sizes; default "10000,100000,200000"), BENCH_QUERIES
 * (default 300), BENCH_INGEST (default 2000), BENCH_VECTOR_QUERIES (default
 * 100; 0 skips recall), BENCH_KEEP=1 keeps the temp home. `issue_13` gathers
 * every figure of issue 13's target list per size and engine, next to the
 * targets.
 *
 * Ingest sustained 0 -> N (SQLite; --sustained N or BENCH_SUSTAINED, default
 * 100000, 0 skips; BENCH_SLICE, default 10000): a fresh server on an empty
 * home fed N memories over HTTP by one client, each slice reported with its
 * rate and the server's CPU per memory; then, at N, one client against eight
 * concurrent ones (BENCH_INGEST memories each), and the server's RSS.
 * `--only sustained` runs just that.
 *
 * `--only receipts` (issue 37): at each size (default 100000), /recall-index
 * with receipts off and on (config recall.receipts), servers restarted on the
 * same store and alternated for BENCH_ROUNDS rounds (default 3), so both see
 * the same machine load: the p50/p95 of each and what receipts add.
 *
 * --engine postgres / both: the server also (or only) on PostgreSQL: a real
 * server (bench/lib/pg-real.ts: BENCH_PG_URL, else a throw-away PostgreSQL 15
 * with pgvector from ../shared/scripts/postgres-pgvector.sh; BENCH_PG=pglite
 * for PGlite). At each size the SQLite store is copied into a fresh schema
 * with `memsvc migrate` (the bulk path, which builds the HNSW index once at
 * its end; timed as a whole), so both engines answer over the same memories;
 * both then ingest the same new notes (one client, and eight at the first
 * size). On PostgreSQL also: /search with 8 clients on one server against 4 on
 * each of two servers over the same schema, and pgvector's recall@10 against
 * an exact scan at several hnsw.ef_search values. The server settings are in
 * the result (`database_settings`). Not measured there: the compiled binary's
 * start-up and the rank() breakdown (SQLite's statements).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { pathsFor } from "../src/config";
import { hashEmbed } from "../src/embed/fallback";
import { VERSION } from "../src/version";
import { NoteGenerator, type Note } from "./lib/corpus";
import {
  startFigures,
  startServer,
  timeConcurrentSearch,
  timeRecallIndex,
  timeRecent,
  timeReferenceQueries,
  timeSearch,
  type BenchTarget,
  type ConcurrencyFigures,
  type Engine,
  type SearchFigures,
  type StartFigures,
} from "./lib/http-run";
import { ingestOverHttp, ingestSustained, searchPath, timeGets, type GetFigures, type IngestFigures } from "./lib/load";
import { pgVectorRecall, type PgSeed, type PgVectorRecall } from "./lib/pg-bench";
import { seedPostgresCached } from "./lib/pg-cache";
import { startBenchDatabase, type BenchDatabase } from "./lib/pg-real";
import { profileRank } from "./lib/profile";
import { seedStore, type SeedResult } from "./lib/seed";
import { freshBinaryCommand, memoryOf, ROOT, spawnServer, type ServerCommand } from "./lib/server";
import { median, round, summarize, timeMs, type Summary } from "./lib/stats";
import { vectorFigures, type VectorFigures } from "./lib/vectors";

const { values: args } = parseArgs({
  options: { sizes: { type: "string" }, engine: { type: "string" }, sustained: { type: "string" }, only: { type: "string" } },
});
const ENGINE_ARG = args.engine ?? "sqlite";
if (!["sqlite", "postgres", "both"].includes(ENGINE_ARG)) throw new Error(`--engine must be sqlite, postgres or both, not ${ENGINE_ARG}`);
const ENGINES: Engine[] = ENGINE_ARG === "both" ? ["sqlite", "postgres"] : [ENGINE_ARG as Engine];
const SIZES = (args.sizes ?? process.env.BENCH_SIZES ?? "10000,100000,200000").split(",").map(Number);
const VECTOR_QUERIES = Number(process.env.BENCH_VECTOR_QUERIES ?? 100);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 300);
const INGEST = Number(process.env.BENCH_INGEST ?? 2000);
const SUSTAINED = Number(args.sustained ?? process.env.BENCH_SUSTAINED ?? 100_000);
const SLICE = Number(process.env.BENCH_SLICE ?? 10_000);
if (args.only !== undefined && args.only !== "sustained" && args.only !== "receipts")
  throw new Error(`--only takes "sustained" or "receipts", not ${args.only}`);
if (args.only === "receipts" && !ENGINES.includes("sqlite")) throw new Error("--only receipts measures SQLite: leave out --engine postgres");
if (args.only === "sustained" && !ENGINES.includes("sqlite")) throw new Error("--only sustained measures SQLite: leave out --engine postgres");
/** Rows per `memsvc migrate` batch when seeding PostgreSQL (the command's maximum). */
const MIGRATE_BATCH = 10_000;
const TARGET = { search_p50_ms: 10, search_p95_ms: 30, at: 100_000 };

/** The SQLite store every size is seeded into (and, for PostgreSQL, copied from). */
const home = mkdtempSync(join(tmpdir(), "memsvc-bench-"));
const pgHome = mkdtempSync(join(tmpdir(), "memsvc-bench-pg-"));
const db = pathsFor(home).db;
const gen = new NoteGenerator(42);
const queryGen = new NoteGenerator(7);
const queries = Array.from({ length: QUERIES }, () => queryGen.query());
/** Queries the server has not seen, timed after the two passes over `queries` (search_fresh). */
const freshGen = new NoteGenerator(8);
const freshQueries = Array.from({ length: QUERIES }, () => freshGen.query());
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
/** Every server of this run: dist/memsvc (rebuilt when older than the sources), what users run. */
let SERVER: ServerCommand | null = null;
const serverCmd = (): ServerCommand => (SERVER ??= freshBinaryCommand(log));

async function startup(): Promise<Record<string, unknown>> {
  const cmd = serverCmd();
  const fresh = mkdtempSync(join(tmpdir(), "memsvc-bench-start-"));
  const times: number[] = [];
  try {
    for (let i = 0; i < 6; i++) {
      const server = await spawnServer(fresh, cmd);
      times.push(server.startMs);
      await server.stop();
    }
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
  return {
    command: cmd.kind === "binary" ? "dist/memsvc server" : "bun src/main.ts server (the build failed)",
    first_start_ms: Math.round(times[0]),
    median_of_5_ms: Math.round(median(times.slice(1))),
    samples_ms: times.slice(1).map(Math.round),
  };
}

interface SizeFigures extends SearchFigures, StartFigures {
  engine: Engine;
  memories: number;
  seed: SeedResult | PgSeed;
  db_mb: number | null;
  /** The same after a restart (SQLite: the index file saved by the first server is there). */
  restart?: StartFigures & { memory: ReturnType<typeof memoryOf> };
  /** /search of other queries (NoteGenerator 8) after the passes over the bench's: new words and rows, warm code. */
  search_fresh: GetFigures;
  /** POST /recall-index with the queries as prompts (a new session each). */
  recall_index: GetFigures;
  recent: GetFigures;
  recent_project: GetFigures;
  /** The same /search queries with 1 and 4 clients in flight. */
  concurrent_search: ConcurrencyFigures[];
  memory: ReturnType<typeof memoryOf>;
  /** PostgreSQL: the PGlite process (the database holds everything in its WebAssembly memory). */
  database_memory?: { rss_mb: number; processes: number };
  /** PostgreSQL: /search with 8 clients on one server, then 4 on each of two servers over the same schema at once. */
  two_servers_search?: { one_server: ConcurrencyFigures; two_servers: ConcurrencyFigures[]; requests_per_s_ratio: number };
  ingest?: IngestFigures[];
  /** Plain SQL straight to the database (bench/lib/http-run.ts REFERENCE_QUERIES), server stopped. */
  engine_reference_ms: Record<string, Summary>;
  vectors?: { sparse: VectorFigures; dense: VectorFigures };
  pgvector?: PgVectorRecall;
}

/** One engine at one size: the server's figures over HTTP, then what needs it stopped. */
async function measure(t: BenchTarget, seed: SeedResult | PgSeed, size: number, notes: Note[], first: boolean, pg: BenchDatabase | null): Promise<SizeFigures> {
  const server = await startServer(t);
  let stopped = false;
  log(`${t.engine}: server up in ${Math.round(server.startMs)} ms; waiting for the vector index`);
  try {
    const start = await startFigures(server);
    log(`${t.engine}: index ready at ${start.start_to_index_ready_ms} ms; timing /search, /recent, /recall-index`);
    const search = await timeSearch(server, queries);
    // Steady state: 300 queries never seen (their words not counted, their rows not read), once the
    // first-pass and second-pass searches compiled the code and the start-up work is done.
    const searchFresh = await timeGets(server.url, server.pid, freshQueries.map(searchPath));
    const recent = await timeRecent(server, queries);
    const recallIndex = await timeRecallIndex(server, queries);
    const concurrent = [await timeConcurrentSearch(server, queries.slice(0, 100), 1), await timeConcurrentSearch(server, queries.slice(0, 100), 4)];
    const twoServers = t.pg && pg?.kind === "postgres" ? await twoServersSearch(t, server) : undefined;
    const memory = memoryOf(server.pid);
    const figures: SizeFigures = {
      engine: t.engine,
      memories: size,
      seed,
      db_mb: t.pg ? null : Math.round(statSync(db).size / 1024 / 1024),
      ...start,
      ...search,
      search_fresh: searchFresh,
      ...recent,
      recall_index: recallIndex,
      concurrent_search: concurrent,
      ...(twoServers ? { two_servers_search: twoServers } : {}),
      memory,
      engine_reference_ms: {},
    };
    if (notes.length > 0) {
      // One client at every size (does ingest slow as the store grows?), and
      // eight clients at the first size. PGlite: one client only (its socket
      // multiplexer serves one backend; eight clients' overlapping ingest
      // transactions hung it, measured); a real server has a backend per connection.
      log(`${t.engine}: ingesting ${notes.length} memories over HTTP`);
      const half = Math.floor(notes.length / 2);
      figures.ingest =
        first && pg?.kind !== "pglite"
          ? [await ingestOverHttp(server.url, notes.slice(0, half), 1), await ingestOverHttp(server.url, notes.slice(half), 8)]
          : [await ingestOverHttp(server.url, notes, 1)];
    }
    if (pg) figures.database_memory = pg.memoryMb();
    stopped = true;
    await server.stop();
    log(`${t.engine}: restarting`);
    const again = await startServer(t);
    try {
      figures.restart = { ...(await startFigures(again)), memory: memoryOf(again.pid) };
    } finally {
      await again.stop();
    }
    log(`${t.engine}: reference SQL on the database itself`);
    figures.engine_reference_ms = await timeReferenceQueries(t, db);
    if (VECTOR_QUERIES > 0) {
      log(`${t.engine}: vector recall@10 against exact at ${size}`);
      if (t.pg) {
        const projects = [...new Set(queries.map((q) => q.project).filter((p): p is string => !!p))];
        figures.pgvector = await pgVectorRecall(t.pg.url, t.pg.schema, queries.slice(0, Math.min(VECTOR_QUERIES, 50)), (i) => projects[i % projects.length]);
      } else figures.vectors = { sparse: vectorFigures(size, VECTOR_QUERIES, false), dense: vectorFigures(size, VECTOR_QUERIES, true) };
    }
    return figures;
  } finally {
    if (!stopped) await server.stop();
  }
}

/**
 * Throughput of two memsvc servers over one database against one: the same
 * 200 searches with 8 clients in flight on `server`, then 4 on it and 4 on a
 * second server (its own home, the same schema) at once.
 */
async function twoServersSearch(t: BenchTarget, server: Awaited<ReturnType<typeof startServer>>): Promise<NonNullable<SizeFigures["two_servers_search"]>> {
  const qs = queries.slice(0, 200);
  const one = await timeConcurrentSearch(server, qs, 8);
  const home2 = mkdtempSync(join(tmpdir(), "memsvc-bench-pg2-"));
  const second = await startServer({ ...t, home: home2 });
  try {
    await timeConcurrentSearch(second, qs.slice(0, 20), 2);
    const t0 = performance.now();
    const both = await Promise.all([timeConcurrentSearch(server, qs, 4), timeConcurrentSearch(second, qs, 4)]);
    const rps = (qs.length * 2) / ((performance.now() - t0) / 1000);
    return { one_server: one, two_servers: both, requests_per_s_ratio: round(rps / one.requests_per_s) };
  } finally {
    await second.stop();
    rmSync(home2, { recursive: true, force: true });
  }
}

const ratio = (a: number | undefined, b: number | undefined) => (a && b ? round(a / b) : null);

/** PostgreSQL's figure over SQLite's for the headline latencies (above 1: PostgreSQL slower). */
function ratios(lite: SizeFigures, pg: SizeFigures): Record<string, number | null> {
  return {
    search_p50: ratio(pg.search.latency_ms.p50, lite.search.latency_ms.p50),
    search_p95: ratio(pg.search.latency_ms.p95, lite.search.latency_ms.p95),
    search_project_p50: ratio(pg.search_project.latency_ms.p50, lite.search_project.latency_ms.p50),
    recall_index_p50: ratio(pg.recall_index.latency_ms.p50, lite.recall_index.latency_ms.p50),
    recall_index_p95: ratio(pg.recall_index.latency_ms.p95, lite.recall_index.latency_ms.p95),
    recent_p50: ratio(pg.recent.latency_ms.p50, lite.recent.latency_ms.p50),
    ingest_per_s: ratio(pg.ingest?.[0]?.memories_per_s, lite.ingest?.[0]?.memories_per_s),
  };
}

/**
 * Every figure of issue 13's target list, per size and engine, gathered from
 * the measurements above (wall clock under the load average printed with it;
 * server CPU where load inflates wall time).
 */
function issue13Summary(sizes: Record<string, Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    targets: {
      vector_recall_at_10: ">= 0.95 sparse and dense",
      vector_phase_p95_ms: "<= 3 at 100k",
      search_p95_ms: "<= 15 at 100k, <= 25 at 200k, project filter included",
      recent_p95_ms: "<= 10 at 200k, with and without a project",
      start_to_first_200_ms: "<= 300 at 100k",
      index_ready_ms: "<= 1500 at 100k",
      ingest_per_s: ">= 600 sustained, one client",
      rss_mb: "<= 300 at 100k after warm-up",
    },
  };
  for (const [size, at] of Object.entries(sizes)) {
    const perEngine: Record<string, unknown> = {};
    for (const engine of ENGINES) {
      const f = at[engine] as SizeFigures | undefined;
      if (f) perEngine[engine] = issue13Figures(f);
    }
    out[size] = perEngine;
  }
  return out;
}

function issue13Figures(f: SizeFigures): Record<string, unknown> {
  const sqlite = f.engine === "sqlite";
  return {
    vector_recall_at_10: f.vectors
      ? {
          sparse: f.vectors.sparse.recall_at_10,
          dense: f.vectors.dense.recall_at_10,
          sparse_project: f.vectors.sparse.recall_at_10_project,
          dense_project: f.vectors.dense.recall_at_10_project,
        }
      : f.pgvector
        ? { hnsw: f.pgvector.recall_at_10, hnsw_project: f.pgvector.recall_at_10_project }
        : null,
    vector_phase_p95_ms: f.vectors
      ? { sparse: f.vectors.sparse.search_ms.p95, dense: f.vectors.dense.search_ms.p95, sparse_project: f.vectors.sparse.search_project_ms.p95 }
      : f.pgvector
        ? { hnsw: f.pgvector.hnsw_ms.p95, hnsw_project: f.pgvector.hnsw_project_ms.p95 }
        : null,
    // Ingest's similarity-link search (k 3 within the new memory's project), in process.
    link_search: f.vectors
      ? {
          recall_at_3: { sparse: f.vectors.sparse.link_recall_at_3, dense: f.vectors.dense.link_recall_at_3 },
          cpu_ms: { sparse: f.vectors.sparse.link_search_cpu_ms, dense: f.vectors.dense.link_search_cpu_ms },
        }
      : null,
    search_p95_ms: {
      all: f.search.latency_ms.p95,
      without_project: f.search_unfiltered.latency_ms.p95,
      with_project: f.search_project.latency_ms.p95,
      fresh_queries: f.search_fresh.latency_ms.p95,
    },
    // The 20 untimed searches before "all": the first a server answers once its index is ready (start-up work runs beside them).
    first_searches_ms: f.search.warmup_latency_ms ? { p50: f.search.warmup_latency_ms.p50, max: f.search.warmup_latency_ms.max } : null,
    search_server_cpu_ms_per_request: {
      without_project: f.search_unfiltered.server_cpu_ms_per_request,
      with_project: f.search_project.server_cpu_ms_per_request,
      first_pass: f.search.server_cpu_ms_per_request,
      fresh_queries: f.search_fresh.server_cpu_ms_per_request,
    },
    recent_p95_ms: { without_project: f.recent.latency_ms.p95, with_project: f.recent_project.latency_ms.p95 },
    recent_server_cpu_ms_per_request: { without_project: f.recent.server_cpu_ms_per_request, with_project: f.recent_project.server_cpu_ms_per_request },
    start_to_first_200_ms: { first_start: f.start_to_first_200_ms, restart: f.restart?.start_to_first_200_ms ?? null },
    // SQLite loads the index from vec0 on a first start and from the index file on a restart; PostgreSQL has nothing to load.
    index_ready_ms: sqlite
      ? { first_start_from_vec0: f.start_to_index_ready_ms, restart_from_index_file: f.restart?.start_to_index_ready_ms ?? null }
      : { first_start: f.start_to_index_ready_ms, restart: f.restart?.start_to_index_ready_ms ?? null },
    start_server_cpu_ms: { first_start: f.start_cpu_ms, restart: f.restart?.start_cpu_ms ?? null },
    start_longest_wait_ms: { first_start: f.start_longest_wait_ms, restart: f.restart?.start_longest_wait_ms ?? null },
    ingest_per_s: f.ingest?.map((i) => ({ concurrency: i.concurrency, memories_per_s: i.memories_per_s })) ?? null,
    rss_mb: {
      after_queries: f.memory.rss_mb,
      peak: f.memory.peak_rss_mb,
      restart: f.restart?.memory.rss_mb ?? null,
      ...(f.database_memory ? { database: f.database_memory.rss_mb } : {}),
    },
  };
}

/**
 * Ingest from 0 to SUSTAINED memories over HTTP into a fresh SQLite server
 * (its own home), one client, reported per SLICE; then one client against
 * eight at that size, and the server's RSS.
 */
async function sustained(): Promise<Record<string, unknown>> {
  const fresh = mkdtempSync(join(tmpdir(), "memsvc-bench-ingest-"));
  const notes = new NoteGenerator(1234);
  const next = () => notes.note();
  try {
    const server = await startServer({ engine: "sqlite", home: fresh, cmd: serverCmd() });
    try {
      log(`ingest sustained 0 -> ${SUSTAINED}, one client, per ${SLICE}`);
      const load = [loadavg().map((x) => round(x))];
      const slices = await ingestSustained(server.url, server.pid, next, SUSTAINED, SLICE, 1);
      for (const s of slices) log(`  ${s.from} -> ${s.to}: ${s.memories_per_s}/s, ${s.server_cpu_ms_per_memory} ms CPU a memory`);
      load.push(loadavg().map((x) => round(x)));
      const compare = Math.max(1, INGEST);
      const one = (await ingestSustained(server.url, server.pid, next, compare, compare, 1, SUSTAINED))[0];
      const eight = (await ingestSustained(server.url, server.pid, next, compare, compare, 8, SUSTAINED + compare))[0];
      load.push(loadavg().map((x) => round(x)));
      const rates = slices.map((s) => s.memories_per_s);
      const cpu = slices.map((s) => s.server_cpu_ms_per_memory);
      return {
        memories: SUSTAINED,
        client: "one sequential client, HTTP keep-alive; fresh server and empty home",
        slices,
        min_memories_per_s: Math.min(...rates),
        overall_memories_per_s: Math.round(SUSTAINED / slices.reduce((t, s) => t + (s.to - s.from) / s.memories_per_s, 0)),
        server_cpu_ms_per_memory: { first_slice: cpu[0], last_slice: cpu[cpu.length - 1] },
        at_size: { memories: SUSTAINED, one_client: one, eight_clients: eight },
        memory_after: memoryOf(server.pid),
        load_average: { start: load[0], after_sustained: load[1], end: load[2] },
      };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

function embedCost(): Record<string, unknown> {
  const samples = queries.map((q) => timeMs(() => hashEmbed(q.query)));
  return { embedder: "fallback:hash-v1", query_embedding_ms: summarize(samples, 4) };
}

/** /recall-index with receipts off and on, alternating servers on one store (see `--only receipts`). */
async function receiptsOffOn(size: number): Promise<Record<string, unknown>> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const configFile = pathsFor(home).config;
  const base = existsSync(configFile) ? JSON.parse(readFileSync(configFile, "utf8")) : {};
  const runs: Record<"off" | "on", { p50: number; p95: number; cpu: number }[]> = { off: [], on: [] };
  for (let r = 0; r < rounds; r++) {
    for (const mode of r % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const)) {
      writeFileSync(configFile, JSON.stringify({ ...base, recall: { ...(base.recall ?? {}), receipts: mode === "on" } }));
      const server = await startServer({ engine: "sqlite", home, cmd: serverCmd() });
      try {
        await startFigures(server);
        // A lull for the server's own start-up work (the tokenizer, the warm-ups) before timing.
        await Bun.sleep(4000);
        const f = await timeRecallIndex(server, queries, 100 * r);
        runs[mode].push({ p50: f.latency_ms.p50, p95: f.latency_ms.p95, cpu: f.server_cpu_ms_per_request });
        log(`receipts ${mode} at ${size}, round ${r + 1}: p50 ${f.latency_ms.p50} ms, p95 ${f.latency_ms.p95} ms`);
      } finally {
        await server.stop();
      }
    }
  }
  writeFileSync(configFile, JSON.stringify(base));
  const med = (xs: number[]) => round(median(xs), 3);
  const off = { p50_ms: med(runs.off.map((x) => x.p50)), p95_ms: med(runs.off.map((x) => x.p95)), server_cpu_ms_per_request: med(runs.off.map((x) => x.cpu)) };
  const on = { p50_ms: med(runs.on.map((x) => x.p50)), p95_ms: med(runs.on.map((x) => x.p95)), server_cpu_ms_per_request: med(runs.on.map((x) => x.cpu)) };
  return {
    memories: size,
    rounds,
    receipts_off: off,
    receipts_on: on,
    added_p50_ms: round(on.p50_ms - off.p50_ms, 3),
    target: "receipts add < 0.5 ms p50",
    samples: runs,
    note: "medians over rounds of 100 prompts each (new session per prompt), servers alternated off/on on the same store; a shared 2-core machine: read the spread in samples",
  };
}

async function main(): Promise<void> {
  const started = performance.now();
  const result: Record<string, unknown> = {
    bench: "http",
    engines: ENGINES,
    version: VERSION,
    date: new Date().toISOString(),
    machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version, load_average_at_start: loadavg().map((x) => round(x)) },
    client: "one sequential client in this process, HTTP keep-alive on 127.0.0.1; the server is a separate process (server_command)",
    server_command: serverCmd().kind === "binary" ? "dist/memsvc server (built from this checkout's sources)" : "bun src/main.ts server (the build failed)",
    queries: { count: queries.length, with_project: queries.filter((q) => q.project).length, examples: queries.slice(0, 3) },
  };
  let pg: BenchDatabase | null = null;
  try {
    if (args.only === "receipts") {
      const out: Record<string, unknown> = {};
      let current = 0;
      for (const size of args.sizes ? SIZES : [100_000]) {
        log(`seeding ${size - current} memories into SQLite (store will hold ${size})`);
        seedStore(db, gen, size - current);
        current = size;
        out[size] = await receiptsOffOn(size);
        log(`receipts at ${size}: ${JSON.stringify(out[size])}`);
      }
      result.receipts = out;
      result.load_average_at_end = loadavg().map((x) => round(x));
      result.seconds = Math.round((performance.now() - started) / 1000);
      return finish(result);
    }
    // Before PGlite starts: the sustained ingest has the machine to itself.
    if (SUSTAINED > 0 && ENGINES.includes("sqlite")) result.ingest_sustained = await sustained();
    if (args.only === "sustained") {
      result.load_average_at_end = loadavg().map((x) => round(x));
      result.seconds = Math.round((performance.now() - started) / 1000);
      return finish(result);
    }
    if (ENGINES.includes("postgres")) {
      // A real server seeds 100k through `memsvc migrate` in about a minute: no cache
      // (bench/lib/pg-cache.ts served PGlite, which took half an hour).
      pg = await startBenchDatabase(log);
      result.database = pg.describe;
      if (pg.settings) result.database_settings = pg.settings;
    }
    if (ENGINES.includes("sqlite")) result.startup = await startup();
    result.query_embedding = embedCost();
    const sizes: Record<string, Record<string, unknown>> = {};
    let current = 0;
    let previousSchema: string | null = null;
    const seedNow = Date.now();
    for (const [i, size] of SIZES.entries()) {
      log(`seeding ${size - current} memories into SQLite (store will hold ${size})`);
      const seeded = seedStore(db, gen, size - current, seedNow);
      const seedOut = { ...seeded, seconds: round(seeded.seconds), embed_seconds: round(seeded.embed_seconds) };
      const notes = INGEST > 0 ? Array.from({ length: INGEST }, () => gen.note()) : [];
      const at: Record<string, unknown> = { memories: seeded.total, load_average_before: loadavg().map((x) => round(x)) };
      let pgTarget: BenchTarget | null = null;
      let pgSeed: PgSeed | null = null;
      if (pg) {
        // A fresh schema per size, copied (or loaded from the cache) before SQLite ingests on top: both engines hold the same memories.
        const schema = `bench_${seeded.total}`;
        const out = await seedPostgresCached({
          pg: pg as unknown as Parameters<typeof seedPostgresCached>[0]["pg"],
          cache: null,
          size,
          schema,
          sqliteDb: db,
          sourceHome: home,
          pgHome,
          previousSchema,
          batch: MIGRATE_BATCH,
          log,
        });
        pgSeed = out.seed;
        pgTarget = { engine: "postgres", home: pgHome, cmd: serverCmd(), pg: { url: pg.url, schema } };
        previousSchema = schema;
        log(`postgres seed: ${JSON.stringify(pgSeed)}`);
      }
      // Each engine's figures are logged as soon as they are in: a run cut short keeps what it measured.
      if (ENGINES.includes("sqlite")) {
        at.sqlite = await measure({ engine: "sqlite", home, cmd: serverCmd() }, seedOut, seeded.total, notes, i === 0, null);
        log(`sqlite figures at ${size}: ${JSON.stringify(at.sqlite)}`);
      }
      if (pgTarget && pgSeed) {
        at.postgres = await measure(pgTarget, pgSeed, seeded.total, notes, i === 0, pg);
        log(`postgres figures at ${size}: ${JSON.stringify(at.postgres)}`);
      }
      if (at.sqlite && at.postgres) at.postgres_over_sqlite = ratios(at.sqlite as SizeFigures, at.postgres as SizeFigures);
      at.load_average_after = loadavg().map((x) => round(x));
      sizes[String(size)] = at;
      log(`figures at ${size}: ${JSON.stringify(at)}`);
      // The SQLite store grew by what its server ingested.
      current = seeded.total + (ENGINES.includes("sqlite") ? notes.length : 0);
    }
    result.sizes = sizes;
    result.issue_13 = issue13Summary(sizes);
    if (result.ingest_sustained) {
      const sus = result.ingest_sustained as { memories: number; min_memories_per_s: number; overall_memories_per_s: number };
      (result.issue_13 as Record<string, unknown>).ingest_sustained = {
        memories: sus.memories,
        min_slice_per_s: sus.min_memories_per_s,
        overall_per_s: sus.overall_memories_per_s,
      };
    }
    if (ENGINES.includes("sqlite")) {
      log(`profiling rank() in-process at ${current} memories`);
      result.rank_profile = { memories: current, ...(await profileRank(home, queries)) };
      const last = sizes[String(SIZES[SIZES.length - 1])].sqlite as SizeFigures;
      result.target = {
        ...TARGET,
        measured_p50_ms: last.search.latency_ms.p50,
        measured_p95_ms: last.search.latency_ms.p95,
        met: last.memories >= TARGET.at && last.search.latency_ms.p50 < TARGET.search_p50_ms && last.search.latency_ms.p95 < TARGET.search_p95_ms,
      };
    }
    result.load_average_at_end = loadavg().map((x) => round(x));
    result.seconds = Math.round((performance.now() - started) / 1000);
  } finally {
    pg?.stop();
    if (process.env.BENCH_KEEP === "1") log(`kept ${home} and ${pgHome}`);
    else for (const dir of [home, pgHome]) rmSync(dir, { recursive: true, force: true });
  }
  finish(result);
}

function finish(result: Record<string, unknown>): void {
  const json = JSON.stringify(result, null, 2);
  mkdirSync(join(ROOT, "bench/results"), { recursive: true });
  writeFileSync(join(ROOT, "bench/results", `http-${ENGINE_ARG}-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), `${json}\n`);
  console.log(json);
}

await main();
