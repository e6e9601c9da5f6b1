import { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { prepareSqlite, sqliteVecLibrary } from "../../platform/natives";
import { prepareDatabaseFile, tightenDatabaseFiles } from "../../private-files";
import { WAL_AUTOCHECKPOINT_PAGES } from "../../core/tuning";
import { MIGRATIONS } from "./migrations";
import * as schema from "./schema";

export type Drizzle = ReturnType<typeof drizzle<typeof schema>>;

export interface Store {
  readonly sqlite: Database;
  readonly orm: Drizzle;
  readonly file: string;
  close(): void;
}

/** Opens (creating if needed) the database: WAL, pragmas, sqlite-vec, migrations. */
export function openStore(file: string): Store {
  if (file !== ":memory:") prepareDatabaseFile(file);
  prepareSqlite();
  const sqlite = new Database(file, { create: true, strict: true });
  // The busy timeout first: switching to WAL waits for another process's lock (a closing server's checkpoint).
  sqlite.run("PRAGMA busy_timeout = 5000");
  sqlite.run("PRAGMA journal_mode = WAL");
  if (file !== ":memory:") tightenDatabaseFiles(file);
  sqlite.run("PRAGMA synchronous = NORMAL");
  sqlite.run(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  sqlite.run("PRAGMA foreign_keys = ON");
  sqlite.run("PRAGMA cache_size = -65536");
  sqlite.run("PRAGMA temp_store = MEMORY");
  sqlite.loadExtension(sqliteVecLibrary(), "sqlite3_vec_init");
  migrate(sqlite);
  let closed = false;
  return {
    sqlite,
    orm: drizzle(sqlite, { schema }),
    file,
    close() {
      if (closed) return;
      closed = true;
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

export function getMeta(store: Store, key: string): string | null {
  return store.sqlite.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?").get(key)?.value ?? null;
}

export function setMeta(store: Store, key: string, value: string): void {
  store.sqlite.run("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [key, value]);
}
