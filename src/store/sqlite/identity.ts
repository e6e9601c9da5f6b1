import type { IdentityStore } from "../../core/identity";
import type { Store as SqliteHandle } from "./open";

/** identity/ on SQLite. */
export function sqliteIdentity(_h: SqliteHandle): IdentityStore {
  return {};
}
