import { SQL } from "bun";
import { drizzle, type BunSQLDatabase } from "drizzle-orm/bun-sql";
import { redactDatabaseUrl, SCHEMA_NAME } from "../../config";
import { reportingContention } from "./contention";
import { PgUnavailableError } from "./errors";
import { migratePostgres } from "./migrate";
import { pgTables, type PgTables } from "./schema";

export { PgUnavailableError };

export type PgOrm = BunSQLDatabase<Record<string, never>>;

export interface PgOpenOptions {
  /** postgres:// URL; it may hold a password, which nothing here logs. */
  url: string;
  /** Every table lives in this schema (a plain identifier, checked again here). */
  schema: string;
  /** Most connections this handle opens (config database_pool). */
  pool?: number;
  /** Seconds to wait for a connection before failing. */
  connectTimeoutS?: number;
}

/**
 * A PostgreSQL store: what every capability's postgres store works with.
 * Constructing it opens nothing (createServices stays synchronous); `ready()`
 * connects and migrates once, and pgStorage makes every store method await it.
 */
export interface PgHandle {
  /**
   * Bun's SQL client: the pool, or inside storage.transaction the
   * transaction's own connection. Raw SQL is for what drizzle cannot say
   * (tsvector ranking, pgvector operators, recursive CTEs); name tables as
   * `${h.schema}.memories` via `h.sql.unsafe`, or with drizzle's `h.t`.
   */
  readonly sql: SQL;
  /** drizzle over `sql` (drizzle-orm/bun-sql); use with the tables in `t`. */
  readonly orm: PgOrm;
  /** This store's tables, qualified by its schema. */
  readonly t: PgTables;
  /** The validated schema name, safe to splice into SQL text. */
  readonly schema: string;
  /** The URL with its password replaced by ***: the only form to log or show. */
  readonly location: string;
  /** True for a handle bound to a transaction (see storage.transaction). */
  readonly inTransaction: boolean;
  /** Connects, checks pgvector and migrates, once (memoised; retried after a failure). */
  ready(): Promise<void>;
  /** This handle's queries run on `tx` (a transaction or reserved connection). */
  bind(tx: SQL): PgHandle;
  /**
   * Runs `fn` in a transaction holding pg_advisory_xact_lock on `key` (within
   * this schema): every server over the database runs it one at a time. Inside
   * a transaction the lock joins it and is held to its end.
   */
  withAdvisoryLock<T>(key: string, fn: (h: PgHandle) => Promise<T>): Promise<T>;
  /** As withAdvisoryLock, but gives up at once (returns `{ ran: false }`) when another holds the lock. */
  tryAdvisoryLock<T>(key: string, fn: (h: PgHandle) => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }>;
  /**
   * Takes or renews the lease `name` for `owner` until now + ttlMs; true when
   * `owner` holds it afterwards. For work longer than a transaction should
   * last (model calls): renew it while working; a dead owner's lease expires.
   */
  lease(name: string, owner: string, ttlMs: number, now?: number): Promise<boolean>;
  /** Gives up `owner`'s lease on `name` (no-op when someone else holds it). */
  releaseLease(name: string, owner: string): Promise<void>;
  /** Closes the pool (a no-op on a handle bound to a transaction). */
  close(): Promise<void>;
}

/** A handle to a PostgreSQL store; connects lazily (see PgHandle.ready). */
export function openPostgres(opts: PgOpenOptions): PgHandle {
  if (!SCHEMA_NAME.test(opts.schema)) throw new Error(`database schema must be a plain identifier, got "${opts.schema}"`);
  const location = redactDatabaseUrl(opts.url);
  const secret = safePassword(opts.url);
  // prepare: false: PgBouncer in transaction mode routes the statements of
  // one client to different backends, where a named prepared statement does
  // not exist; unnamed ones work everywhere (PGlite's test front too).
  const pool = new SQL({ url: opts.url, prepare: false, max: opts.pool ?? 10, connectionTimeout: opts.connectTimeoutS ?? 10, idleTimeout: 60 });
  const t = pgTables(opts.schema);
  let readyOnce: Promise<void> | null = null;
  let closed = false;

  const ready = (): Promise<void> => {
    if (closed) return Promise.reject(new PgUnavailableError(`the database handle for ${location} is closed`, "closed"));
    readyOnce ??= migratePostgres(pool, opts.schema, location, secret).catch((e) => {
      readyOnce = null;
      throw e;
    });
    return readyOnce;
  };

  const make = (client: SQL, inTransaction: boolean): PgHandle => {
    const h: PgHandle = {
      sql: client,
      orm: drizzle({ client }) as PgOrm,
      t,
      schema: opts.schema,
      location,
      inTransaction,
      ready,
      bind: (tx) => make(tx, true),
      async withAdvisoryLock(key, fn) {
        await ready();
        if (inTransaction) {
          await client`SELECT pg_advisory_xact_lock(hashtextextended(${lockName(opts.schema, key)}, 0))`;
          return fn(h);
        }
        return reportingContention(() =>
          pool.begin(async (tx) => {
            await tx`SELECT pg_advisory_xact_lock(hashtextextended(${lockName(opts.schema, key)}, 0))`;
            return fn(make(tx, true));
          }),
        ) as Promise<any>;
      },
      async tryAdvisoryLock(key, fn) {
        await ready();
        const attempt = async (c: SQL, inner: PgHandle) => {
          const [row] = await c`SELECT pg_try_advisory_xact_lock(hashtextextended(${lockName(opts.schema, key)}, 0)) AS ok`;
          if (!row.ok) return { ran: false as const };
          return { ran: true as const, value: await fn(inner) };
        };
        if (inTransaction) return attempt(client, h);
        return reportingContention(() => pool.begin((tx) => attempt(tx, make(tx, true)))) as Promise<any>;
      },
      async lease(name, owner, ttlMs, now = Date.now()) {
        await ready();
        const rows = await client.unsafe(
          `INSERT INTO ${opts.schema}.leases AS l (name, owner, expires_at) VALUES ($1, $2, $3)
           ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
           WHERE l.owner = excluded.owner OR l.expires_at <= $4
           RETURNING owner`,
          [name, owner, now + ttlMs, now],
        );
        return rows.length === 1;
      },
      async releaseLease(name, owner) {
        await ready();
        await client.unsafe(`DELETE FROM ${opts.schema}.leases WHERE name = $1 AND owner = $2`, [name, owner]);
      },
      async close() {
        // A handle bound to a transaction does not own the pool.
        if (closed || inTransaction) return;
        closed = true;
        await pool.close({ timeout: 5 });
      },
    };
    return h;
  };
  return make(pool, false);
}

/** Advisory locks are database-wide: the schema keeps two stores in one database apart. */
const lockName = (schema: string, key: string) => `memsvc:${schema}:${key}`;

function safePassword(url: string): string | null {
  try {
    const p = new URL(url).password;
    return p ? decodeURIComponent(p) : null;
  } catch {
    return null;
  }
}
