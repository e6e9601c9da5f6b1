/**
 * PostgreSQL side of the HTTP benchmark: a schema filled from the bench's
 * SQLite store through `memsvc migrate` (the product's bulk path: the same
 * memories, ids, dates, links and vectors on both engines), the HNSW index
 * built once afterwards (timed), and pgvector's recall@10 against an exact
 * scan in the same database.
 */
import { SQL } from "bun";
import { join } from "node:path";
import { hashEmbed } from "../../src/embed/fallback";
import type { PgHandle } from "../../src/store/postgres/open";
import { pgSearch } from "../../src/store/postgres/search";
import { PG_HNSW_EF_SEARCH } from "../../src/store/postgres/tuning";
import type { Query } from "./corpus";
import { type BenchTarget, startServer } from "./http-run";
import { round, summarize, type Summary } from "./stats";

/** The index as migration 0001 creates it; `memsvc migrate` drops it for the copy and builds it once at the end (so this is a no-op after it). */
export const HNSW = (schema: string) => `CREATE INDEX IF NOT EXISTS memory_vec_hnsw ON ${schema}.memory_vec USING hnsw (embedding vector_cosine_ops)`;

export interface PgSeed {
  memories: number;
  migrate_seconds: number;
  memories_per_s: number;
  /** CREATE INDEX ... USING hnsw over every vector, in one statement: part of migrate_seconds since migrate builds it itself (this is then ~0). */
  hnsw_build_seconds: number;
  /**
   * True when the schema came from bench/lib/pg-cache.ts: the seconds above
   * are then those of the original seeding (at `seeded_at`), and
   * `load_seconds` is PGlite's start from the dumped data directory.
   */
  from_cache: boolean;
  cache_file?: string;
  seeded_at?: string;
  load_seconds?: number;
  /** An entry dumped before `memsvc migrate` ran VACUUM (ANALYZE): that, after the load (once; the entry is rewritten). */
  vacuum_after_load_seconds?: number;
  /** Writing the cache entry after this seeding (not part of the seeding times). */
  dump_seconds?: number;
}

/**
 * Creates `t.pg.schema` (a server's start-up migration), then copies the
 * SQLite store of `sourceHome` into it with `memsvc migrate --batch <batch>`
 * (a child process: the CLI a user runs), which drops the HNSW index for
 * the copy and builds it in one statement at its end (its time is part of
 * migrate_seconds).
 */
export async function seedPostgresByMigrate(t: BenchTarget, root: string, sourceHome: string, batch: number): Promise<PgSeed> {
  if (!t.pg) throw new Error("seedPostgresByMigrate: not a PostgreSQL target");
  const { url, schema } = t.pg;
  await (await startServer(t)).stop();
  const sql = new SQL({ url, prepare: false, max: 1 });
  try {
    const t0 = performance.now();
    const proc = Bun.spawn([process.execPath, join(root, "src/main.ts"), "migrate", "--to", url, "--schema", schema, "--batch", String(batch)], {
      cwd: root,
      env: { ...process.env, MEMSVC_HOME: sourceHome, MEMSVC_OFFLINE: "1", MEMSVC_STORAGE: "sqlite" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    if (code !== 0) throw new Error(`memsvc migrate exited with ${code}:\n${stderr.slice(-2000)}`);
    const migrateS = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    // pgvector builds the graph in memory when it fits maintenance_work_mem (else much slower, on disk).
    await sql.unsafe("SET maintenance_work_mem = '1GB'");
    await sql.unsafe(HNSW(schema));
    const hnswS = (performance.now() - t1) / 1000;
    const [{ n }] = await sql.unsafe(`SELECT count(*)::float8 AS n FROM ${schema}.memories`);
    return {
      memories: Number(n),
      migrate_seconds: round(migrateS, 1),
      memories_per_s: Math.round(Number(n) / migrateS),
      hnsw_build_seconds: round(hnswS, 1),
      from_cache: false,
    };
  } finally {
    await sql.close();
  }
}

export interface PgVectorRecall {
  queries: number;
  ef_search: number;
  recall_at_10: number;
  recall_at_10_project: number;
  hnsw_ms: Summary;
  hnsw_project_ms: Summary;
  exact_ms: Summary;
  /** The same queries at other hnsw.ef_search values: what recall each buys, at what latency. */
  ef_sweep: { ef_search: number; recall_at_10: number; recall_at_10_project: number; hnsw_p50_ms: number; hnsw_p95_ms: number; hnsw_project_p95_ms: number }[];
}

/** ef_search values the sweep tries besides the engine's own. */
const EF_SWEEP = [40, 64, 100, 400];

/**
 * pgvector HNSW (through the engine's own search store, so its ef_search and
 * iterative scan) against the exact cosine top 10 of the same vectors (a
 * sequential scan: index scans off), with and without a project filter.
 * Query vectors are the offline embedder's, as the server computes them.
 */
export async function pgVectorRecall(url: string, schema: string, queries: Query[], projectOf: (i: number) => string): Promise<PgVectorRecall> {
  const sql = new SQL({ url, prepare: false, max: 1 });
  try {
    const handle = { sql, schema, inTransaction: false, ready: async () => {} } as unknown as PgHandle;
    const store = pgSearch(handle);
    const exact = async (v: Float32Array, project: string | null): Promise<Set<number>> => {
      const rows = await sql.begin(async (tx) => {
        await tx.unsafe("SET LOCAL enable_indexscan = off");
        const where = project === null ? "" : `JOIN ${schema}.memories m ON m.seq = v.seq AND m.project = $2`;
        const params = project === null ? [`[${v.join(",")}]`] : [`[${v.join(",")}]`, project];
        return tx.unsafe(`SELECT v.seq::float8 AS seq FROM ${schema}.memory_vec v ${where} ORDER BY v.embedding <=> $1::vector LIMIT 10`, params);
      });
      return new Set((rows as { seq: number }[]).map((r) => Number(r.seq)));
    };
    let hit = 0;
    let hitProject = 0;
    const hnswMs: number[] = [];
    const projectMs: number[] = [];
    const exactMs: number[] = [];
    for (const [i, q] of queries.entries()) {
      const v = hashEmbed(q.query);
      const project = q.project ?? projectOf(i);
      let t0 = performance.now();
      const truth = await exact(v, null);
      exactMs.push(performance.now() - t0);
      const truthProject = await exact(v, project);
      t0 = performance.now();
      const got = await store.nearest(v, 10, null);
      hnswMs.push(performance.now() - t0);
      t0 = performance.now();
      const gotProject = await store.nearest(v, 10, project);
      projectMs.push(performance.now() - t0);
      hit += got.filter((h) => truth.has(h.seq)).length / Math.max(1, truth.size);
      hitProject += gotProject.filter((h) => truthProject.has(h.seq)).length / Math.max(1, truthProject.size);
    }
    const truths: { v: Float32Array; project: string; all: Set<number>; inProject: Set<number> }[] = [];
    for (const [i, q] of queries.entries()) {
      const v = hashEmbed(q.query);
      const project = q.project ?? projectOf(i);
      truths.push({ v, project, all: await exact(v, null), inProject: await exact(v, project) });
    }
    const sweep: PgVectorRecall["ef_sweep"] = [];
    for (const ef of EF_SWEEP) {
      const at = pgSearch(handle, { efSearch: ef });
      let a = 0;
      let b = 0;
      const ms: number[] = [];
      const msProject: number[] = [];
      for (const t of truths) {
        let t0 = performance.now();
        const got = await at.nearest(t.v, 10, null);
        ms.push(performance.now() - t0);
        t0 = performance.now();
        const gotProject = await at.nearest(t.v, 10, t.project);
        msProject.push(performance.now() - t0);
        a += got.filter((h) => t.all.has(h.seq)).length / Math.max(1, t.all.size);
        b += gotProject.filter((h) => t.inProject.has(h.seq)).length / Math.max(1, t.inProject.size);
      }
      const s1 = summarize(ms);
      sweep.push({
        ef_search: ef,
        recall_at_10: round(a / truths.length, 3),
        recall_at_10_project: round(b / truths.length, 3),
        hnsw_p50_ms: s1.p50,
        hnsw_p95_ms: s1.p95,
        hnsw_project_p95_ms: summarize(msProject).p95,
      });
    }
    return {
      ef_sweep: sweep,
      queries: queries.length,
      ef_search: PG_HNSW_EF_SEARCH,
      recall_at_10: round(hit / queries.length, 3),
      recall_at_10_project: round(hitProject / queries.length, 3),
      hnsw_ms: summarize(hnswMs),
      hnsw_project_ms: summarize(projectMs),
      exact_ms: summarize(exactMs),
    };
  } finally {
    await sql.close();
  }
}
