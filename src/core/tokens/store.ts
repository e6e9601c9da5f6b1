/**
 * What tokens/ needs from storage: one row per issued token, keyed by the
 * SHA-256 of the secret (the secret itself is never stored). One
 * implementation per engine: src/store/sqlite/tokens.ts and src/store/postgres/tokens.ts.
 */
export type Role = "reader" | "writer" | "admin";

export interface TokenRow {
  name: string;
  role: Role;
  /** The projects the token may see and change; null: every project. */
  projects: string[] | null;
  createdAt: number;
  expiresAt: number | null;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export interface TokensStore {
  /** Adds a live token; false when a live token already has that name. */
  insert(row: TokenRow & { hash: string }): Promise<boolean>;
  /** Live and revoked tokens, live first, then by name. */
  list(): Promise<TokenRow[]>;
  /** The token whose secret hashes to `hash` (live or not), with its hash as stored. */
  byHash(hash: string): Promise<(TokenRow & { hash: string }) | null>;
  /** Marks the live token of that name revoked; false when there is none. */
  revoke(name: string, at: number): Promise<boolean>;
  /** Records a use (callers throttle it: it is a write). */
  touch(hash: string, at: number): Promise<void>;
  /** Live admin tokens (the bootstrap check). */
  countAdmins(): Promise<number>;
}

export interface TokenColumns {
  name: string;
  hash: string;
  role: string;
  projects: string | null;
  created_at: number | string;
  expires_at: number | string | null;
  last_used_at: number | string | null;
  revoked_at: number | string | null;
}

/** A row as both engines return it (snake_case columns; PostgreSQL BIGINTs may come back as strings). */
export function tokenRowOf(r: TokenColumns): TokenRow & { hash: string } {
  return {
    name: r.name,
    hash: r.hash,
    role: r.role as Role,
    projects: r.projects === null ? null : (JSON.parse(r.projects) as string[]),
    createdAt: Number(r.created_at),
    expiresAt: r.expires_at === null ? null : Number(r.expires_at),
    lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
  };
}
