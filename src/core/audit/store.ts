/**
 * What audit/ needs from storage: an append-only log with paging and pruning.
 * One implementation per engine: src/store/sqlite/audit.ts and src/store/postgres/audit.ts.
 */
export interface AuditEntry {
  at: number;
  /** The token name (or "config", "localhost", "cli:<user>", "-" for a refused request). */
  actor: string;
  action: string;
  /** What it acted on: a memory id, a token name, a file. */
  target: string | null;
  /** A short JSON object or line. */
  detail: string | null;
  /** Where from: the peer address, or "cli". */
  peer: string | null;
}

export interface AuditFilter {
  actor?: string;
  /** An action, or a prefix ending in "." (memory.). */
  action?: string;
  since?: number;
  until?: number;
  /** Entries with an id below this (paging, newest first). */
  before?: number;
  limit: number;
}

export interface AuditStore {
  append(entries: readonly AuditEntry[]): Promise<void>;
  /** Newest first. */
  list(filter: AuditFilter): Promise<(AuditEntry & { id: number })[]>;
  /** Drops entries older than `olderThan` and beyond the newest `keep`; returns how many went. */
  prune(olderThan: number, keep: number): Promise<number>;
}
