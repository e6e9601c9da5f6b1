import type { Config } from "../config";
import type { Logger } from "../core/log";
import type { Storage } from "../core/storage";
import { openPostgres } from "./postgres/open";
import { pgStorage } from "./postgres/storage";
import { openStore, type Store } from "./sqlite/open";
import { sqliteStorage } from "./sqlite/storage";

/** Where a store lives: config's storage, paths.db and database settings. */
export type StorageConfig = Pick<Config, "storage" | "database"> & { paths: Pick<Config["paths"], "db"> };

export interface OpenStorageOptions {
  /** SQLite: the database file (default config.paths.db). */
  dbFile?: string;
  /** PostgreSQL: most connections (default config.database.pool); a one-shot command needs few. */
  pool?: number;
  /** SQLite: checkpoint the WAL on a worker thread, logging here (the long-running server; sqlite/checkpointer.ts). */
  walCheckpointer?: Logger;
  /** SQLite: run search's full-text queries on a worker thread, logging here (the server; sqlite/fts-reader.ts). */
  ftsReader?: Logger;
  /** SQLite: handed the raw handle once it is open (tests that look into the file). */
  sqliteHandle?: (store: Store) => void;
}

/**
 * The store `config` names: the one place that picks an engine (the server,
 * migrate, import/export/backup, nightly and tests all come here). Opening is
 * synchronous: SQLite opens (and migrates) its file now and may throw a
 * storage failure (store/failures.ts reads it); PostgreSQL connects lazily,
 * on the first query or on `storage.ready()` (call it to fail fast).
 */
export function openStorage(config: StorageConfig, opts: OpenStorageOptions = {}): Storage {
  if (config.storage === "postgres") {
    const { url, schema, pool } = config.database;
    // loadConfig refuses storage "postgres" without a URL.
    return pgStorage(openPostgres({ url: url!, schema, pool: opts.pool ?? pool }));
  }
  const store = openStore(opts.dbFile ?? config.paths.db, {
    ...(opts.walCheckpointer ? { checkpointer: { log: opts.walCheckpointer } } : {}),
    ...(opts.ftsReader ? { ftsReader: { log: opts.ftsReader } } : {}),
  });
  opts.sqliteHandle?.(store);
  return sqliteStorage(store);
}
