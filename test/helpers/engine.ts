import { SQL } from "bun";
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { prepareSqlite, sqliteVecLibrary } from "../../src/platform/natives";
import type { Services } from "../../src/core/services";
import type { Storage } from "../../src/core/storage";
import type { Store } from "../../src/store/sqlite/open";

/**
 * Which engine this test run builds its stores on: `MEMSVC_TEST_ENGINE=postgres
 * bun test ...` runs the suite against PostgreSQL (a database test/preload.ts
 * makes on the real server MEMSVC_TEST_PG_URL names, else a PGlite it
 * starts), every home in a schema of its own.
 */
export const testEngine: "sqlite" | "postgres" = process.env.MEMSVC_TEST_ENGINE === "postgres" ? "postgres" : "sqlite";
export const onPostgres = testEngine === "postgres";
export const onSqlite = !onPostgres;

/** The database URL test/preload.ts made (postgres runs only). */
export function testDatabaseUrl(): string {
  const url = process.env.MEMSVC_TEST_DATABASE_URL;
  if (!url)
    throw new Error(
      "MEMSVC_TEST_ENGINE=postgres but no MEMSVC_TEST_DATABASE_URL: test/preload.ts makes the database and sets it (is bunfig.toml's preload in effect?)",
    );
  return url;
}

/**
 * The schema a home's store lives in: derived from the home's path, so each
 * fresh home gets a fresh schema and a restarted server (same home) finds its data.
 */
export function schemaForHome(home: string): string {
  return `t_${createHash("sha256").update(home).digest("hex").slice(0, 20)}`;
}

/** config.json keys that put a home's store on the test engine ({} on sqlite). */
export function engineConfig(home: string): Record<string, unknown> {
  if (!onPostgres) return {};
  // The bypass is off by default on PostgreSQL (a team server); these stores are the suite's loopback servers.
  return { storage: "postgres", database_url: testDatabaseUrl(), database_schema: schemaForHome(home), auth: { localhostBypass: true } };
}

/** Environment that puts a child memsvc's store on the test engine ({} on sqlite). */
export function engineEnv(home: string): Record<string, string> {
  if (!onPostgres) return {};
  return { MEMSVC_STORAGE: "postgres", MEMSVC_DATABASE_URL: testDatabaseUrl(), MEMSVC_DATABASE_SCHEMA: schemaForHome(home) };
}

const sqliteStores = new WeakMap<Storage, Store>();

/** openStorage's `sqliteHandle` hook for test stores: remembers the raw handle behind `storage`. */
export function rememberSqlite(storage: Storage, store: Store): void {
  sqliteStores.set(storage, store);
}

/** The raw SQLite handle behind a test store (throws on PostgreSQL: look with dbRows there). */
export function sqliteStoreOf(s: Services): Store {
  const store = sqliteStores.get(s.storage);
  if (!store) throw new Error(`no SQLite handle behind this store (storage "${s.config.storage}"): use dbRows, which speaks both engines`);
  return store;
}

const clients = new Map<string, SQL>();
function clientFor(url: string): SQL {
  let c = clients.get(url);
  if (!c) {
    c = new SQL({ url, prepare: false, max: 2 });
    clients.set(url, c);
  }
  return c;
}

/** `?` placeholders (outside quotes) as PostgreSQL's `$1, $2, ...`. */
export function numberPlaceholders(text: string): string {
  let n = 0;
  let out = "";
  let quote: string | null = null;
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "?") {
      out += `$${++n}`;
      continue;
    }
    out += ch;
  }
  return out;
}

const INT8 = 20;
const NUMERIC = 1700;
const BOOL = 16;

/**
 * Runs one SQL statement on whichever engine `s` uses and returns its rows as
 * plain objects: the engine-neutral way for a test to look into the database
 * (write it in the SQL both engines speak, with `?` placeholders and
 * unqualified table names). On PostgreSQL it runs in a transaction with
 * `SET LOCAL search_path` to the store's schema (SET LOCAL ends with the
 * transaction, so the pooled connection keeps no search_path), and bigint, numeric and boolean values come back as numbers,
 * as SQLite returns them.
 */
export async function dbRows<T = Record<string, any>>(s: Services, text: string, params: unknown[] = []): Promise<T[]> {
  if (s.config.storage === "sqlite")
    return sqliteStoreOf(s)
      .sqlite.query(text)
      .all(...(params as any[])) as T[];
  await s.storage.ready();
  return pgRows<T>(s.config.database.url!, s.config.database.schema, text, params);
}

/**
 * dbRows for a home whose store a child process (a server, a CLI command)
 * made on the test engine: its memsvc.db read-only (sqlite-vec loaded), or
 * on PostgreSQL the home's schema (engineEnv). Safe while the child runs.
 */
export async function homeRows<T = Record<string, any>>(home: string, text: string, params: unknown[] = []): Promise<T[]> {
  if (onPostgres) return pgRows<T>(testDatabaseUrl(), schemaForHome(home), text, params);
  prepareSqlite();
  const db = new Database(join(home, "memsvc.db"), { readonly: true });
  try {
    db.loadExtension(sqliteVecLibrary(), "sqlite3_vec_init");
    return db.query(text).all(...(params as any[])) as T[];
  } finally {
    db.close();
  }
}

async function pgRows<T>(url: string, schema: string, text: string, params: unknown[]): Promise<T[]> {
  const rows = await clientFor(url).begin(async (tx) => {
    await tx.unsafe(`SET LOCAL search_path TO ${schema}, public`);
    return tx.unsafe(numberPlaceholders(text), params as any[]);
  });
  const columns: { name: string; type: number }[] = (rows as any).columns ?? [];
  const convert = columns.filter((c) => c.type === INT8 || c.type === NUMERIC || c.type === BOOL);
  const out: T[] = [];
  for (const row of rows as Record<string, any>[]) {
    const copy: Record<string, any> = { ...row };
    for (const c of convert) {
      const v = copy[c.name];
      if (v === null || v === undefined) continue;
      copy[c.name] = c.type === BOOL ? (v ? 1 : 0) : Number(v);
    }
    out.push(copy as T);
  }
  return out;
}

/** The first row of dbRows, or undefined. */
export async function dbRow<T = Record<string, any>>(s: Services, text: string, params: unknown[] = []): Promise<T | undefined> {
  return (await dbRows<T>(s, text, params))[0];
}
