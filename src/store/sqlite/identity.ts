import type { IdentityStore } from "../../core/identity";
import type { SqliteHandle } from "./storage";

/** identity/ on SQLite. */
export function sqliteIdentity(_h: SqliteHandle): IdentityStore {
  return {};
}
