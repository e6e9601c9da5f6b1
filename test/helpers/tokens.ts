import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { onPostgres } from "./engine";
import { BUN, childEnv, ROOT, run } from "./process";

/**
 * Tokens for tests that start a child `memsvc server` (or run the CLI) on a
 * home and call it with a bearer token.
 *
 * On SQLite the home's config.json token is an admin token. On PostgreSQL
 * only tokens stored in the database authenticate (issue 36, docs/teams.md):
 * a server's config token gives nothing there. So on PostgreSQL these make a
 * token in the home's database through the real bootstrap path, `memsvc token
 * create --role admin` run on the home's config (its schema, engineEnv), and
 * can put it into the home's config.json, where the home's own clients (hooks,
 * capture, status, doctor, `memsvc mcp`) read it: the "server per laptop over
 * one database" topology, where the laptop's config token is the member's own
 * database token.
 */

const made = new Map<string, string>();

export interface DatabaseTokenOptions {
  /** Default "test-admin" (one per home; the same name again returns the same token). */
  name?: string;
  role?: "reader" | "writer" | "admin";
  projects?: string[];
  /** Extra environment for the CLI (e.g. the engineEnv of another home whose database it shares). */
  env?: Record<string, string>;
}

/** Makes a token in the home's database with `memsvc token create` (either engine) and returns it. */
export async function createDatabaseToken(home: string, opts: DatabaseTokenOptions = {}): Promise<string> {
  const name = opts.name ?? "test-admin";
  const key = `${home}\0${name}`;
  const known = made.get(key);
  if (known) return known;
  const args = ["token", "create", "--name", name, "--role", opts.role ?? "admin"];
  if (opts.projects) args.push("--projects", opts.projects.join(","));
  const r = await run([BUN, join(ROOT, "src/main.ts"), ...args], childEnv(home, opts.env ?? {}), ROOT, 60_000);
  const token = r.stdout.trim();
  if (r.code !== 0 || !token) throw new Error(`memsvc token create --name ${name} failed (exit ${r.code}): ${r.stderr.trim()}`);
  made.set(key, token);
  return token;
}

/**
 * The admin bearer token a client of this home's server sends: config.json's
 * token on SQLite; on PostgreSQL an admin token made in the home's database
 * (createDatabaseToken). With `writeConfig` (the default) it is also written
 * as config.json's token, so the home's own CLI clients send it.
 */
export async function adminToken(home: string, opts: { writeConfig?: boolean; env?: Record<string, string> } = {}): Promise<string> {
  const file = join(home, "config.json");
  if (!onPostgres) {
    if (!existsSync(file)) throw new Error(`adminToken: ${file} does not exist yet (start the server or run memsvc init first)`);
    return JSON.parse(readFileSync(file, "utf8")).token;
  }
  const token = await createDatabaseToken(home, { env: opts.env });
  if (opts.writeConfig !== false) useTokenInConfig(home, token);
  return token;
}

/** Puts `token` into the home's config.json (made if missing), keeping its other keys. */
export function useTokenInConfig(home: string, token: string): void {
  const file = join(home, "config.json");
  mkdirSync(home, { recursive: true });
  const config = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
  writeFileSync(file, JSON.stringify({ ...config, token }, null, 2), { mode: 0o600 });
}
