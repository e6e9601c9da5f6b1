import { SQL } from "bun";

/**
 * The PostgreSQL the tests run on. MEMSVC_TEST_PG_URL names a real server (a
 * role that may CREATE DATABASE; .ci/run starts PostgreSQL 15 with pgvector
 * and sets it): each test process then gets a database of its own on it,
 * dropped when the process ends. Without it (a quick local run) the tests
 * fall back to PGlite (test/helpers/pglite.ts); CI never does (test/preload.ts
 * refuses).
 */
export const realServerUrl: string | null = process.env.MEMSVC_TEST_PG_URL || null;

/**
 * The password every test database URL carries: trust auth ignores it, PGlite
 * too. Tests check it never appears in a log, an error or a response.
 */
export const TEST_DB_PASSWORD = "pg-test-secret-9f3a";

/** `url` with its user's password set to TEST_DB_PASSWORD and its database to `db` (kept when null). */
export function withDatabase(url: string, db: string | null, user?: string): string {
  const u = new URL(url);
  if (user) u.username = user;
  u.password = TEST_DB_PASSWORD;
  if (db) u.pathname = `/${db}`;
  return u.toString();
}

function admin(): SQL {
  if (!realServerUrl) throw new Error("no MEMSVC_TEST_PG_URL: no real PostgreSQL server to make a database on");
  return new SQL({ url: realServerUrl, max: 1, prepare: false });
}

const made: string[] = [];

export interface TestDatabase {
  url: string;
  name: string;
}

/**
 * A fresh database on the real server: with the pgvector extension (as a
 * superuser makes it), or `vector: false` owned by a role that is no
 * superuser, so memsvc itself cannot create the extension (its error path).
 */
export async function createTestDatabase(prefix: string, opts: { vector?: boolean } = {}): Promise<TestDatabase> {
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const sql = admin();
  try {
    let owner: string | undefined;
    if (opts.vector === false) {
      owner = "memsvc_plain";
      // Idempotent across test processes: a duplicate from a race is fine.
      await sql.unsafe(`DO $$ BEGIN CREATE ROLE ${owner} LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`);
    }
    await sql.unsafe(`CREATE DATABASE ${name}${owner ? ` OWNER ${owner}` : ""}`);
    made.push(name);
    if (opts.vector !== false) {
      const db = new SQL({ url: withDatabase(realServerUrl!, name), max: 1, prepare: false });
      try {
        await db.unsafe("CREATE EXTENSION IF NOT EXISTS vector");
      } finally {
        await db.close();
      }
    }
    return { name, url: withDatabase(realServerUrl!, name, owner) };
  } finally {
    await sql.close();
  }
}

/** Drops every database this process made (servers still connected are disconnected: FORCE). */
export async function dropTestDatabases(): Promise<void> {
  if (made.length === 0) return;
  const sql = admin();
  try {
    for (const name of made.splice(0)) await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await sql.close();
  }
}

let shared: Promise<string> | null = null;

/**
 * The URL of this test process's one PostgreSQL database with pgvector, made
 * on first use: on the real server when MEMSVC_TEST_PG_URL is set, else the
 * process's PGlite. Tests that exercise PostgreSQL in the SQLite run too use it.
 */
export function sharedPgUrl(): Promise<string> {
  shared ??= realServerUrl ? createTestDatabase("memsvc_test").then((d) => d.url) : import("./pglite").then((m) => m.pgliteUrl());
  return shared;
}
