/**
 * The pieces of the HTTP benchmark (bench/http.ts) that bench/compare.ts
 * reuses: which server to run against which store, and the timed requests.
 * A BenchTarget is one server checkout (its own `src/main.ts`) with one home
 * and, on PostgreSQL, one database schema.
 */
import { SQL } from "bun";
import { Database } from "bun:sqlite";
import type { Query } from "./corpus";
import { ingestOverHttp, searchPath, timeGets, timeRecall, type GetFigures, type IngestFigures } from "./load";
import { cpuMsOf, spawnServer, type RunningServer, type ServerCommand } from "./server";
import { round, summarize, type Summary } from "./stats";
import type { NoteGenerator } from "./corpus";

export type Engine = "sqlite" | "postgres";

export interface BenchTarget {
  engine: Engine;
  /** MEMSVC_HOME of the server (the SQLite file lives in it). */
  home: string;
  cmd: ServerCommand;
  /** PostgreSQL only: the database URL and schema the server is pointed at. */
  pg?: { url: string; schema: string };
}

export function serverEnv(t: BenchTarget): Record<string, string> {
  return t.pg ? { MEMSVC_STORAGE: "postgres", MEMSVC_DATABASE_URL: t.pg.url, MEMSVC_DATABASE_SCHEMA: t.pg.schema } : { MEMSVC_STORAGE: "sqlite" };
}

export function startServer(t: BenchTarget, timeoutMs = 120_000): Promise<RunningServer> {
  return spawnServer(t.home, t.cmd, timeoutMs, serverEnv(t));
}

/** Polls /health until the vector index reports ready; ms since the server's spawn. */
export async function indexReady(url: string, startMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const h = (await (await fetch(`${url}/health`)).json()) as { index?: string };
    if (h.index === undefined || h.index === "ready") return startMs + performance.now() - t0;
    await Bun.sleep(5);
  }
}

export interface StartFigures {
  /** Spawn to the first 200 of /health. */
  start_to_first_200_ms: number;
  /** Spawn to /health reporting `index: ready` (SQLite: the vector index loaded; PostgreSQL: at once). */
  start_to_index_ready_ms: number;
  /** Server CPU (user + system) spent by the first 200 and by `index: ready`: what load on a shared machine cannot inflate. */
  start_cpu_ms: { first_200: number; index_ready: number };
  /**
   * The longest any request waited while the server started: a static file
   * asked for every START_PING_MS from the first 200 to START_WATCH_AFTER_MS
   * past `index: ready` (the start-up work that follows the load: word-count
   * warm-up, calibration, the index file's save). What /health's answer
   * hides: work done in the same turn as the index turning ready delays
   * every request then, and /health says ready only after it.
   */
  start_longest_wait_ms: number;
}

const START_PING_MS = 5;
const START_WATCH_AFTER_MS = 3000;

/** Waits for `index: ready` on a server just started: wall clock and its CPU to the first 200 and to ready, and the longest wait of a request meanwhile. */
export async function startFigures(server: RunningServer): Promise<StartFigures> {
  const cpuFirst200 = cpuMsOf(server.pid);
  let watching = true;
  let longest = 0;
  const pings = (async () => {
    while (watching) {
      const t = performance.now();
      const res = await fetch(`${server.url}/favicon.svg`);
      await res.arrayBuffer();
      longest = Math.max(longest, performance.now() - t);
      await Bun.sleep(START_PING_MS);
    }
  })();
  const readyMs = await indexReady(server.url, server.startMs);
  const cpuReady = cpuMsOf(server.pid);
  await Bun.sleep(START_WATCH_AFTER_MS);
  watching = false;
  await pings;
  return {
    start_to_first_200_ms: Math.round(server.startMs),
    start_to_index_ready_ms: Math.round(readyMs),
    start_cpu_ms: { first_200: cpuFirst200, index_ready: cpuReady },
    start_longest_wait_ms: round(longest),
  };
}

export interface SearchFigures {
  search: GetFigures & { filtered_share: number };
  search_unfiltered: GetFigures;
  search_project: GetFigures;
}

/** /search for every query, then those without and with a project apart. */
export async function timeSearch(server: RunningServer, queries: Query[]): Promise<SearchFigures> {
  const search = await timeGets(server.url, server.pid, queries.map(searchPath));
  const unfiltered = await timeGets(server.url, server.pid, queries.filter((q) => !q.project).map(searchPath), 0);
  const filtered = await timeGets(server.url, server.pid, queries.filter((q) => q.project).map(searchPath), 0);
  return {
    search: { ...search, filtered_share: round(queries.filter((q) => q.project).length / queries.length) },
    search_unfiltered: unfiltered,
    search_project: filtered,
  };
}

/**
 * POST /recall-index with 100 queries as prompts (a new session each): the
 * first 100 by default, what a server answers right after its searches;
 * `from` 100 times the next 100, once that code is warm.
 */
export function timeRecallIndex(server: RunningServer, queries: Query[], from = 0): Promise<GetFigures> {
  return timeRecall(
    server.url,
    server.pid,
    // Past the end the list wraps: a later round of --only receipts repeats earlier prompts (new sessions) rather than timing none.
    Array.from({ length: Math.min(100, queries.length) }, (_, i) => queries[(from + i) % queries.length]).map((q) => ({
      prompt: q.query,
      project: q.project ?? null,
    })),
  );
}

export async function timeRecent(server: RunningServer, queries: Query[]): Promise<{ recent: GetFigures; recent_project: GetFigures }> {
  const projects = [...new Set(queries.map((q) => q.project).filter((p): p is string => !!p))];
  const recent = await timeGets(
    server.url,
    server.pid,
    Array.from({ length: 100 }, () => "/recent"),
  );
  const recentProject = await timeGets(
    server.url,
    server.pid,
    Array.from({ length: 100 }, (_, i) => `/recent?project=${encodeURIComponent(projects[i % projects.length])}`),
  );
  return { recent, recent_project: recentProject };
}

/** `count` new memories from `gen` over HTTP, one client. */
export function timeIngest(server: RunningServer, gen: NoteGenerator, count: number, concurrency = 1): Promise<IngestFigures> {
  return ingestOverHttp(
    server.url,
    Array.from({ length: count }, () => gen.note()),
    concurrency,
  );
}

export interface ConcurrencyFigures {
  clients: number;
  requests: number;
  requests_per_s: number;
  latency_ms: Summary;
  server_cpu_ms_per_request: number;
}

/**
 * /search throughput with `clients` requests in flight at once. On SQLite the
 * server answers a search in its one JavaScript thread; on PostgreSQL it
 * waits for the database, so a real server's backends could overlap what
 * PGlite's single backend serialises.
 */
export async function timeConcurrentSearch(server: RunningServer, queries: Query[], clients: number): Promise<ConcurrencyFigures> {
  const paths = queries.map(searchPath);
  const samples: number[] = [];
  let next = 0;
  const cpu = cpuMsOf(server.pid);
  const started = performance.now();
  const worker = async () => {
    while (next < paths.length) {
      const path = paths[next++];
      const t = performance.now();
      const res = await fetch(server.url + path);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
      samples.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: clients }, worker));
  const seconds = (performance.now() - started) / 1000;
  return {
    clients,
    requests: paths.length,
    requests_per_s: Math.round(paths.length / seconds),
    latency_ms: summarize(samples),
    server_cpu_ms_per_request: round((cpuMsOf(server.pid) - cpu) / paths.length),
  };
}

/**
 * The same SQL on both engines, straight to the database (no memsvc): a
 * reference for how fast the engine itself is. PGlite is PostgreSQL compiled
 * to WebAssembly behind a TCP socket; SQLite is native code in-process, so
 * the ratio bounds what WASM plus the wire costs, not PostgreSQL's own speed.
 */
export const REFERENCE_QUERIES: Record<string, (table: string) => string> = {
  count: (m) => `SELECT count(*) AS n FROM ${m}`,
  sum_length_full_scan: (m) => `SELECT sum(length(content)) AS n FROM ${m}`,
  group_by_project: (m) => `SELECT project, count(*) AS n FROM ${m} GROUP BY project ORDER BY n DESC`,
  newest_20_by_created: (m) => `SELECT id FROM ${m} ORDER BY created_at DESC LIMIT 20`,
  by_id_100: (m) => `SELECT content FROM ${m} WHERE id IN (SELECT id FROM ${m} ORDER BY seq LIMIT 100)`,
};

export async function timeReferenceQueries(t: BenchTarget, dbFile: string, rounds = 5): Promise<Record<string, Summary>> {
  const out: Record<string, Summary> = {};
  if (t.pg) {
    const sql = new SQL({ url: t.pg.url, prepare: false, max: 1 });
    try {
      // Qualified names, not SET search_path: PGlite's connections share its one backend's session.
      for (const [name, query] of Object.entries(REFERENCE_QUERIES)) {
        const text = query(`${t.pg.schema}.memories`);
        const samples: number[] = [];
        for (let i = 0; i <= rounds; i++) {
          const t0 = performance.now();
          await sql.unsafe(text);
          if (i > 0) samples.push(performance.now() - t0);
        }
        out[name] = summarize(samples);
      }
    } finally {
      await sql.close();
    }
  } else {
    const db = new Database(dbFile, { readonly: true });
    try {
      for (const [name, query] of Object.entries(REFERENCE_QUERIES)) {
        const q = db.query(query("memories"));
        const samples: number[] = [];
        for (let i = 0; i <= rounds; i++) {
          const t0 = performance.now();
          q.all();
          if (i > 0) samples.push(performance.now() - t0);
        }
        out[name] = summarize(samples);
      }
    } finally {
      db.close();
    }
  }
  return out;
}
