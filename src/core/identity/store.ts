/**
 * What identity/ needs from storage. The spec keeps identity sections as
 * Markdown files in the service home, and on SQLite they stay there: the
 * database holds nothing of identity (no identity/ file ran SQL before the
 * storage seam), and one home has one server. Several servers over one
 * PostgreSQL database each have their own home, so there the sections live in
 * the database, where an edit through one server is what every other reads.
 * One implementation per engine: src/store/sqlite/identity.ts and src/store/postgres/identity.ts.
 */
export interface IdentityStore {
  /** Sections kept in the database, or null where the home's identity folder is the truth (SQLite). */
  readonly sections: SectionStore | null;
}

/** One section as stored: its Markdown and when it was last written (ms). */
export interface StoredSection {
  body: string;
  mtimeMs: number;
}

/**
 * Where sections live: the identity folder (core/identity/sections.ts) or a
 * database table. A scope is the global one (agent null) or one agent's.
 */
export interface SectionStore {
  /** The sections of one scope, sorted by name. */
  readScope(agent: string | null): Promise<Map<string, StoredSection>>;
  /** Agent ids with a scope of their own (on disk: an agents/<id>/ folder), sorted. */
  agentScopes(): Promise<string[]>;
  /** The agent has a scope of its own. */
  hasAgentScope(agent: string): Promise<boolean>;
  /** Writes sections into one scope, all or nothing; `at` is their new mtime where the store keeps it itself. */
  writeSections(agent: string | null, sections: readonly (readonly [string, string])[], at: number): Promise<void>;
}
