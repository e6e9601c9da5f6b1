import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { conflict, invalid, notFound } from "../../errors";
import type { Principal } from "./principal";
import type { Role, TokenRow, TokensStore } from "./store";
import { MAX_EXPIRY_DAYS, TOKEN_BYTES, TOKEN_PREFIX, TOUCH_EVERY_MS } from "./tuning";

export const ROLES: readonly Role[] = ["reader", "writer", "admin"];

export function hashToken(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export interface CreateTokenInput {
  name: string;
  role?: string;
  /** Comma-separated or a list; empty: every project. */
  projects?: string | readonly string[];
  /** "90d", "12h", "1w" or a count of days. */
  expires?: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/** Days, hours or weeks from now, in ms since the epoch. */
export function parseExpiry(text: string, now: number): number {
  const m = /^\s*(\d{1,5})\s*([hdw]?)\s*$/i.exec(text);
  if (!m) throw invalid(`expires must be a duration such as 90d, 12h or 2w, got "${text.slice(0, 40)}"`);
  const unit = (m[2] || "d").toLowerCase();
  const hours = Number(m[1]) * (unit === "h" ? 1 : unit === "w" ? 168 : 24);
  if (hours <= 0) throw invalid("expires must be longer than zero");
  if (hours > MAX_EXPIRY_DAYS * 24) throw invalid(`expires must be at most ${MAX_EXPIRY_DAYS} days`);
  return now + hours * 3_600_000;
}

function parseProjects(v: CreateTokenInput["projects"]): string[] | null {
  if (v !== undefined && v !== null && typeof v !== "string" && !(Array.isArray(v) && v.every((p) => typeof p === "string")))
    throw invalid("projects must be a list of project names (or one comma-separated string)");
  const list = (typeof v === "string" ? v.split(",") : (v ?? [])).map((p) => p.trim()).filter(Boolean);
  for (const p of list) if (p.length > 200) throw invalid("a project name is longer than 200 characters");
  return list.length ? [...new Set(list)] : null;
}

/** Issues a token: the secret is returned once and only its hash is stored. */
export async function createToken(store: TokensStore, input: CreateTokenInput, now: number): Promise<{ token: string; row: TokenRow }> {
  if (typeof input.name !== "string" || !NAME.test(input.name))
    throw invalid("name must be 1-64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit");
  if (input.expires !== undefined && input.expires !== null && typeof input.expires !== "string")
    throw invalid('expires must be a duration string such as "90d"');
  const role = (input.role ?? "writer") as Role;
  if (!ROLES.includes(role)) throw invalid(`role must be reader, writer or admin, got "${String(input.role).slice(0, 40)}"`);
  const row: TokenRow = {
    name: input.name,
    role,
    projects: parseProjects(input.projects),
    createdAt: now,
    expiresAt: input.expires ? parseExpiry(input.expires, now) : null,
    lastUsedAt: null,
    revokedAt: null,
  };
  const token = TOKEN_PREFIX + randomBytes(TOKEN_BYTES).toString("base64url");
  if (!(await store.insert({ ...row, hash: hashToken(token) }))) throw conflict(`a token named ${input.name} exists; revoke it first or choose another name`);
  return { token, row };
}

export async function revokeToken(store: TokensStore, name: string, now: number): Promise<void> {
  if (!(await store.revoke(name, now))) throw notFound(`no live token named ${String(name).slice(0, 64)}`);
}

export type Authentication = { ok: true; principal: Principal } | { ok: false; reason: "unknown" | "revoked" | "expired"; name?: string };

/**
 * The database's answer for a presented secret, read on every request (an
 * indexed lookup by hash): a revocation through any server is seen by every
 * other at its next request, with no cache to invalidate.
 */
export async function authenticate(store: TokensStore, presented: string, now: number): Promise<Authentication> {
  const hash = hashToken(presented);
  const row = await store.byHash(hash);
  // The lookup is by hash, so its timing says nothing about the secret; compare anyway, in constant time.
  if (!row || !timingSafeEqual(Buffer.from(row.hash, "hex"), Buffer.from(hash, "hex"))) return { ok: false, reason: "unknown" };
  if (row.revokedAt !== null) return { ok: false, reason: "revoked", name: row.name };
  if (row.expiresAt !== null && row.expiresAt <= now) return { ok: false, reason: "expired", name: row.name };
  if (row.lastUsedAt === null || now - row.lastUsedAt >= TOUCH_EVERY_MS) {
    // Not awaited: a failed bookkeeping write must not fail the request.
    store.touch(hash, now).catch(() => {});
  }
  return { ok: true, principal: { name: row.name, role: row.role, projects: row.projects, via: "token" } };
}

/** `token list` / GET /tokens: never the secret or its hash. */
export function tokenView(r: TokenRow, now: number) {
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
  const state = r.revokedAt !== null ? "revoked" : r.expiresAt !== null && r.expiresAt <= now ? "expired" : "live";
  return {
    name: r.name,
    role: r.role,
    projects: r.projects,
    state,
    created_at: iso(r.createdAt),
    last_used_at: iso(r.lastUsedAt),
    expires_at: iso(r.expiresAt),
    revoked_at: iso(r.revokedAt),
  };
}
