import type { SQL, TransactionSQL } from "bun";
import { PG_MIGRATIONS } from "./migrations";
import { PgUnavailableError } from "./errors";

/**
 * HNSW indexes arrived in pgvector 0.5.0; search sets `hnsw.iterative_scan`
 * (0.8.0) so a project filter still finds k neighbours, and on PostgreSQL 15+
 * an unknown name under the extension's `hnsw.` prefix is an error.
 */
const MIN_PGVECTOR = [0, 8, 0];
/** One key for every store in the database: CREATE EXTENSION is database-wide. */
const MIGRATE_LOCK = "memsvc:migrate";

/**
 * Connects, makes sure pgvector is there, and brings `schema` up to the last
 * migration. Everything after the first query runs in one transaction under
 * pg_advisory_xact_lock, so servers starting at once migrate exactly once
 * (the others wait, then find the version current) and a failed migration
 * leaves nothing behind.
 */
export async function migratePostgres(sql: SQL, schema: string, location: string, password: string | null): Promise<void> {
  const hide = (m: string) => (password && password.length > 0 ? m.split(password).join("***") : m);
  try {
    await sql`SELECT 1`;
  } catch (e) {
    throw new PgUnavailableError(`cannot reach PostgreSQL at ${location}: ${hide(describe(e))}`, "unreachable");
  }
  try {
    await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtextextended(${MIGRATE_LOCK}, 0))`;
      await ensureVector(tx, location, hide);
      await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${schema}.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
      const [row] = await tx.unsafe(`SELECT value FROM ${schema}.meta WHERE key = 'schema_version'`);
      const current = row ? Number(row.value) : 0;
      for (const m of PG_MIGRATIONS) {
        if (m.version <= current) continue;
        await tx.unsafe(m.sql.replaceAll("__SCHEMA__", schema)).simple();
        await tx.unsafe(`INSERT INTO ${schema}.meta(key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [
          String(m.version),
        ]);
      }
    });
  } catch (e) {
    if (e instanceof PgUnavailableError) throw e;
    throw new PgUnavailableError(`cannot prepare schema "${schema}" in PostgreSQL at ${location}: ${hide(describe(e))}`, "migration_failed");
  }
}

async function ensureVector(tx: TransactionSQL, location: string, hide: (m: string) => string): Promise<void> {
  let [row] = await tx`SELECT extversion FROM pg_extension WHERE extname = 'vector'`;
  if (!row) {
    try {
      // A savepoint: a failure here must not abort the migration transaction before we explain it.
      await tx.savepoint((sp) => sp`CREATE EXTENSION IF NOT EXISTS vector`);
    } catch (e) {
      throw new PgUnavailableError(
        `PostgreSQL at ${location} has no pgvector extension and it could not be created (${hide(describe(e))}): install pgvector ${MIN_PGVECTOR.join(".")} or later on the server and run CREATE EXTENSION vector as a privileged user`,
        "no_pgvector",
      );
    }
    [row] = await tx`SELECT extversion FROM pg_extension WHERE extname = 'vector'`;
  }
  const version = String(row.extversion);
  if (older(version, MIN_PGVECTOR)) {
    throw new PgUnavailableError(
      `PostgreSQL at ${location} has pgvector ${version}; memsvc needs ${MIN_PGVECTOR.join(".")} or later (HNSW indexes with iterative scans): ALTER EXTENSION vector UPDATE`,
      "no_pgvector",
    );
  }
}

function older(version: string, min: number[]): boolean {
  const parts = version.split(".").map((p) => Number.parseInt(p, 10) || 0);
  for (let i = 0; i < min.length; i++) {
    const a = parts[i] ?? 0;
    if (a !== min[i]) return a < min[i]!;
  }
  return false;
}

function describe(e: unknown): string {
  const err = e as { message?: string; code?: string; errno?: string };
  const msg = err?.message ?? String(e);
  return err?.code && !msg.includes(err.code) ? `${msg} (${err.code})` : msg;
}
