import type { IdentityStore } from "../../core/identity";
import type { SqliteHandle } from "./storage";

/** identity/ on SQLite: the database keeps nothing; sections are the home's files (core/identity/sections.ts). */
export function sqliteIdentity(_h: SqliteHandle): IdentityStore {
  return { sections: null };
}
