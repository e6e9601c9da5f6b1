import { Database } from "bun:sqlite";
import { accessSync, constants } from "node:fs";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { prepareSqlite, sqliteVecLibrary } from "../../platform/natives";
import { prepareDatabaseFile, tightenDatabaseFiles } from "../../private-files";
import { SQLITE_CACHE_KIB, WAL_AUTOCHECKPOINT_PAGES } from "./tuning";
import { startCheckpointer, type Checkpointer, type CheckpointerOptions } from "./checkpointer";
import { startFtsReader, type FtsReader, type FtsReaderOptions } from "./fts-reader";
import { BM25_SQL } from "./search-fts";
import { MIGRATIONS } from "./migrations";
import { buildDeferredIndexes } from "./bulk-load";
import * as schema from "./schema";

export type Drizzle = ReturnType<typeof drizzle<typeof schema>>;

export interface Store {
  readonly sqlite: Database;
  readonly orm: Drizzle;
  readonly file: string;
  /** The WAL checkpoint worker, when openStore was asked for one (the server) and the store can have one. */
  readonly checkpointer: Checkpointer | null;
  /** The full-text reader worker, when openStore was asked for one (the server) and the store can have one. */
  readonly ftsReader: FtsReader | null;
  close(): void;
}

export interface OpenOptions {
  /**
   * Checkpoint the WAL on a worker thread (checkpointer.ts): for the
   * long-running server. Ignored for :memory: and for a store that is not
   * in WAL mode or not writable (read-only media).
   */
  checkpointer?: CheckpointerOptions;
  /** Run search's full-text queries on a worker thread's connection (fts-reader.ts): for the server. Ignored for :memory:. */
  ftsReader?: FtsReaderOptions;
}

/** Opens (creating if needed) the database: WAL, pragmas, sqlite-vec, migrations. */
export function openStore(file: string, opts: OpenOptions = {}): Store {
  if (file !== ":memory:") prepareDatabaseFile(file);
  prepareSqlite();
  const sqlite = new Database(file, { create: true, strict: true });
  // The busy timeout first: switching to WAL waits for another process's lock (a closing server's checkpoint).
  sqlite.run("PRAGMA busy_timeout = 5000");
  const journal = sqlite.query<{ journal_mode: string }, []>("PRAGMA journal_mode = WAL").get()?.journal_mode;
  if (file !== ":memory:") tightenDatabaseFiles(file);
  sqlite.run("PRAGMA synchronous = NORMAL");
  sqlite.run(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  sqlite.run("PRAGMA foreign_keys = ON");
  // Small: see SQLITE_CACHE_KIB (a large cache slows every COMMIT after a page split).
  sqlite.run(`PRAGMA cache_size = -${SQLITE_CACHE_KIB}`);
  sqlite.run("PRAGMA temp_store = MEMORY");
  sqlite.loadExtension(sqliteVecLibrary(), "sqlite3_vec_init");
  // An import into an empty store killed before it built the indexes it deferred: build them now.
  buildDeferredIndexes(sqlite);
  migrate(sqlite);
  // After the migrations: the worker's connection then reads the schema as it stays.
  const checkpointer =
    opts.checkpointer && file !== ":memory:" && journal === "wal" && writable(file) ? checkpointerOrNull(sqlite, file, opts.checkpointer) : null;
  const ftsReader = opts.ftsReader && file !== ":memory:" && journal === "wal" ? ftsReaderOrNull(sqlite, file, opts.ftsReader) : null;
  let closed = false;
  return {
    sqlite,
    orm: drizzle(sqlite, { schema }),
    file,
    checkpointer,
    ftsReader,
    close() {
      if (closed) return;
      closed = true;
      // The workers' connections close first, so the checkpoint below copies everything and nothing else holds the WAL.
      ftsReader?.stop();
      checkpointer?.stop();
      // A clean close checkpoints the WAL so the file is complete on its own.
      try {
        sqlite.run("PRAGMA wal_checkpoint(TRUNCATE)");
      } catch {
        /* a read-only or busy database still closes */
      }
      sqlite.close();
    },
  };
}

/** A worker that cannot even be created leaves the store as it always was, checkpointing itself. */
function checkpointerOrNull(sqlite: Database, file: string, opts: CheckpointerOptions): Checkpointer | null {
  try {
    return startCheckpointer(sqlite, file, opts);
  } catch (e) {
    opts.log("error", `wal: the checkpoint worker could not start: ${(e as Error).message}; the main connection checkpoints the WAL itself`);
    return null;
  }
}

/** A reader that cannot even be created leaves every query on the main connection. */
function ftsReaderOrNull(sqlite: Database, file: string, opts: FtsReaderOptions): FtsReader | null {
  try {
    return startFtsReader(sqlite, file, BM25_SQL, opts);
  } catch (e) {
    opts.log("error", `search: the full-text reader could not start: ${(e as Error).message}; full-text queries run on the main connection`);
    return null;
  }
}

function writable(file: string): boolean {
  try {
    accessSync(file, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function migrate(sqlite: Database): void {
  sqlite.run("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  const row = sqlite.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'schema_version'").get();
  const current = row ? Number(row.value) : 0;
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    sqlite.transaction(() => {
      const sql = skipExistingColumns(sqlite, m.sql);
      // Nothing left but comments (every column there already): bun:sqlite refuses an empty query.
      if (sql.replace(/--[^\n]*/g, "").trim()) sqlite.run(sql);
      sqlite.run("INSERT INTO meta(key, value) VALUES ('schema_version', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [String(m.version)]);
    })();
  }
}

/**
 * SQLite has no ADD COLUMN IF NOT EXISTS: an `ALTER TABLE t ADD COLUMN c ...;`
 * whose column is already there is left out, so a migration that adds columns
 * runs again harmlessly, as the CREATE ... IF NOT EXISTS ones do (a store
 * whose schema_version is behind its tables, e.g. restored by hand).
 */
function skipExistingColumns(sqlite: Database, sql: string): string {
  return sql.replace(/^\s*ALTER TABLE\s+(\w+)\s+ADD COLUMN\s+(\w+)[^;]*;/gim, (statement, table: string, column: string) => {
    const columns = sqlite.query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${table}')`).all();
    return columns.some((c) => c.name === column) ? "" : statement;
  });
}

/** Per connection: meta values read on hot paths (cachedMeta), with when they were read. */
const metaCache = new WeakMap<Database, Map<string, { value: string | null; at: number }>>();

export function getMeta(store: Store, key: string): string | null {
  return store.sqlite.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?").get(key)?.value ?? null;
}

export function setMeta(store: Store, key: string, value: string): void {
  store.sqlite.run("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [key, value]);
  metaCache.get(store.sqlite)?.delete(key);
}

export function deleteMeta(store: Store, key: string): void {
  store.sqlite.run("DELETE FROM meta WHERE key = ?", [key]);
  metaCache.get(store.sqlite)?.delete(key);
}

/**
 * getMeta for a value read many times per request that changes rarely (the
 * re-embed cursor: the word weights' memory count asks for it once per prompt
 * word, ~13 reads and ~45 us of a /recall-index call at 10k). This
 * connection's own writes (setMeta, deleteMeta) drop the entry at once; other
 * processes' writes show within `maxAgeMs`. Inside a transaction the value is
 * read and not kept: it may be rolled back.
 */
export function cachedMeta(store: Store, key: string, maxAgeMs: number): string | null {
  if (store.sqlite.inTransaction) return getMeta(store, key);
  let cache = metaCache.get(store.sqlite);
  if (!cache) metaCache.set(store.sqlite, (cache = new Map()));
  const now = performance.now();
  const hit = cache.get(key);
  if (hit && now - hit.at <= maxAgeMs) return hit.value;
  const value = getMeta(store, key);
  cache.set(key, { value, at: now });
  return value;
}

/** Per connection: one transaction wrapper, built once (bun's db.transaction(fn) costs ~4 us to build, its call ~0.6 us). */
const runners = new WeakMap<Database, (fn: () => unknown) => unknown>();

/**
 * `db.transaction(fn)()` without building a wrapper per call: for paths that
 * run on every request. Nested in an open transaction it is a savepoint, as
 * db.transaction's is.
 */
export function transact<T>(db: Database, fn: () => T): T {
  let run = runners.get(db);
  if (!run) runners.set(db, (run = db.transaction((f: () => unknown) => f())));
  return run(fn) as T;
}
