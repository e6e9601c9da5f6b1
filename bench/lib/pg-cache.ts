/**
 * A cache of seeded PostgreSQL benchmark databases. Seeding PGlite at 100k
 * (`memsvc migrate`, then the HNSW build) takes over half an hour, so
 * bench/http.ts dumps PGlite's data directory after the first seeding at a
 * size and later runs start the database from that file (still in memory:
 * the measured database is the same as a freshly seeded one).
 *
 * An entry is a tar (test/helpers/pglite.ts dump()) plus a JSON file with the
 * original seeding times, the memory count, a checksum of the ids and the
 * time the corpus' dates were drawn against. Its key hashes what determines
 * the content: the generator steps up to this size, the corpus generator and
 * seeder sources, the offline embedder (the vectors), the PostgreSQL
 * migrations, the HNSW statement and the PGlite and pgvector versions. The
 * bench still checks, before using an entry, that the SQLite store it just
 * seeded holds the same memories (count and id checksum) as the loaded
 * schema, and reseeds when not.
 */
import { createHash } from "node:crypto";
import { renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { startPglite, type PgliteProcess } from "../../test/helpers/pglite";
import type { BenchTarget } from "./http-run";
import { seedPostgresByMigrate, type PgSeed } from "./pg-bench";
import { ROOT, serverCommand } from "./server";
import { round } from "./stats";

export interface PgCacheMeta {
  key: string;
  schema: string;
  memories: number;
  ids_sha256: string;
  /** The `now` the seed's creation dates were drawn against (the SQLite store must use it too). */
  seed_now: number;
  seeded_at: string;
  migrate_seconds: number;
  memories_per_s: number;
  hnsw_build_seconds: number;
  tar_bytes: number;
  /**
   * The schema was VACUUM (ANALYZE)d after the copy (`memsvc migrate` does
   * since this field exists). An entry without it is vacuumed after its load,
   * as migrate would have, and written back with it.
   */
  vacuumed?: boolean;
}

export interface PgCacheEntry {
  tar: string;
  meta: PgCacheMeta;
}

/** Where this process's PGlite writes a dump before it is moved into the cache (start PGlite with it as `dumpTo`). */
export const dumpPath = (dir: string) => join(dir, `dump-${process.pid}.tar`);

const base = (dir: string, size: number, key: string) => join(dir, `pg-${size}-${key}`);

/** Moves a finished dump into the cache and writes its metadata next to it (the JSON last: an entry is whole or absent). */
export function saveEntry(dir: string, size: number, dumped: string, meta: PgCacheMeta): PgCacheEntry {
  const b = base(dir, size, meta.key);
  renameSync(dumped, `${b}.tar`);
  writeFileSync(`${b}.json.tmp`, `${JSON.stringify(meta, null, 2)}\n`);
  renameSync(`${b}.json.tmp`, `${b}.json`);
  return { tar: `${b}.tar`, meta };
}

export interface IdDigest {
  memories: number;
  ids_sha256: string;
}

function digest(ids: string[]): IdDigest {
  ids.sort();
  const h = createHash("sha256");
  for (const id of ids) h.update(`${id}\n`);
  return { memories: ids.length, ids_sha256: h.digest("hex") };
}

/** Count and checksum of the ids in a SQLite store. */
export function sqliteIds(dbFile: string): IdDigest {
  const db = new Database(dbFile, { readonly: true });
  try {
    return digest(
      db
        .query<{ id: string }, []>("SELECT id FROM memories")
        .all()
        .map((r) => r.id),
    );
  } finally {
    db.close();
  }
}

/** Count and checksum of the ids in a PostgreSQL schema. */
export async function postgresIds(url: string, schema: string): Promise<IdDigest> {
  const sql = new Bun.SQL({ url, prepare: false, max: 1 });
  try {
    const rows = (await sql.unsafe(`SELECT id FROM ${schema}.memories`)) as { id: string }[];
    return digest(rows.map((r) => r.id));
  } finally {
    await sql.close();
  }
}

export const sameIds = (a: IdDigest, b: IdDigest) => a.memories === b.memories && a.ids_sha256 === b.ids_sha256;

export interface CachedSeedInput {
  /** The running PGlite (replaced by one loaded from the cache on a hit). */
  pg: PgliteProcess;
  /** Null: no cache (BENCH_PG_CACHE=0, or a store that holds HTTP-ingested memories with random ids). */
  cache: { dir: string; key: string; entry: PgCacheEntry | null; seedNow: number } | null;
  size: number;
  schema: string;
  /** The SQLite store the schema must match (and is copied from on a miss). */
  sqliteDb: string;
  sourceHome: string;
  pgHome: string;
  previousSchema: string | null;
  batch: number;
  log: (line: string) => void;
}

/**
 * The PostgreSQL schema for one size: loaded from the cache when an entry
 * holds the same memories as the SQLite store, else copied with `memsvc
 * migrate` plus the HNSW build (and, with a cache, dumped for later runs).
 */
export async function seedPostgresCached(input: CachedSeedInput): Promise<{ pg: PgliteProcess; seed: PgSeed }> {
  const { cache, schema, log } = input;
  let pg = input.pg;
  const target = (): BenchTarget => ({ engine: "postgres", home: input.pgHome, cmd: serverCommand("source"), pg: { url: pg.url, schema } });
  const lite = cache ? sqliteIds(input.sqliteDb) : null;
  const dumpTo = cache ? dumpPath(cache.dir) : undefined;
  let loadedStale = false;
  if (cache?.entry && lite) {
    const { meta, tar } = cache.entry;
    if (meta.schema !== schema || meta.seed_now !== cache.seedNow || !sameIds(lite, meta)) {
      log(`pg cache: ${tar} does not hold the SQLite store's memories (${meta.memories} vs ${lite.memories}, or other ids/dates): reseeding`);
    } else {
      log(`pg cache: starting PGlite from ${tar} (${Math.round(meta.tar_bytes / 1e6)} MB)`);
      pg.stop();
      const t0 = performance.now();
      pg = await startPglite({ load: tar, dumpTo });
      const loadS = (performance.now() - t0) / 1000;
      const loaded = await postgresIds(pg.url, schema).catch(() => null);
      if (loaded && sameIds(loaded, lite)) {
        let vacuumS: number | undefined;
        if (!meta.vacuumed) {
          log(`pg cache: ${tar} predates migrate's VACUUM (ANALYZE): running it, then writing the entry back`);
          const t1 = performance.now();
          await vacuumSchema(pg.url, schema);
          vacuumS = round((performance.now() - t1) / 1000, 1);
          await pg.dump();
          saveEntry(cache.dir, input.size, dumpPath(cache.dir), { ...meta, vacuumed: true, tar_bytes: statSync(dumpPath(cache.dir)).size });
        }
        const seed: PgSeed = {
          memories: meta.memories,
          migrate_seconds: meta.migrate_seconds,
          memories_per_s: meta.memories_per_s,
          hnsw_build_seconds: meta.hnsw_build_seconds,
          from_cache: true,
          cache_file: tar,
          seeded_at: meta.seeded_at,
          load_seconds: round(loadS, 1),
          ...(vacuumS === undefined ? {} : { vacuum_after_load_seconds: vacuumS }),
        };
        return { pg, seed };
      }
      log(`pg cache: the schema loaded from ${tar} does not match the SQLite store: reseeding`);
      loadedStale = true;
    }
  }
  const drop = [...(input.previousSchema && !loadedStale ? [input.previousSchema] : []), ...(loadedStale ? [schema] : [])];
  for (const s of drop) await dropSchema(pg.url, s);
  log(`copying ${input.size} memories into PostgreSQL schema ${schema} (memsvc migrate), then building HNSW`);
  const seed = await seedPostgresByMigrate(target(), ROOT, input.sourceHome, input.batch);
  if (cache && lite && dumpTo) {
    const copied = await postgresIds(pg.url, schema);
    if (!sameIds(copied, lite)) throw new Error(`memsvc migrate copied ${copied.memories} memories, the SQLite store holds ${lite.memories} (or other ids)`);
    const t0 = performance.now();
    await pg.dump();
    const dumpS = round((performance.now() - t0) / 1000, 1);
    const tarBytes = statSync(dumpTo).size;
    const entry = saveEntry(cache.dir, input.size, dumpTo, {
      key: cache.key,
      schema,
      memories: seed.memories,
      ids_sha256: lite.ids_sha256,
      seed_now: cache.seedNow,
      seeded_at: new Date().toISOString(),
      migrate_seconds: seed.migrate_seconds,
      memories_per_s: seed.memories_per_s,
      hnsw_build_seconds: seed.hnsw_build_seconds,
      tar_bytes: tarBytes,
      vacuumed: true,
    });
    log(`pg cache: wrote ${entry.tar} in ${dumpS} s`);
    return { pg, seed: { ...seed, cache_file: entry.tar, dump_seconds: dumpS } };
  }
  return { pg, seed };
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  const sql = new Bun.SQL({ url, prepare: false, max: 1 });
  try {
    await sql.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await sql.close();
  }
}

/** What `memsvc migrate` now ends with (src/store/postgres/memories-bulk.ts), for entries dumped before it did. */
async function vacuumSchema(url: string, schema: string): Promise<void> {
  const sql = new Bun.SQL({ url, prepare: false, max: 1 });
  try {
    const tables = (await sql.unsafe("SELECT tablename FROM pg_tables WHERE schemaname = $1", [schema])) as { tablename: string }[];
    await sql.unsafe(`VACUUM (ANALYZE) ${tables.map((t) => `${schema}."${t.tablename}"`).join(", ")}`);
  } finally {
    await sql.close();
  }
}
