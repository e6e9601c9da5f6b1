import type { MemoriesStore } from "../../core/memories";
import type { Store as SqliteHandle } from "./open";

/** memories/ on SQLite. */
export function sqliteMemories(_h: SqliteHandle): MemoriesStore {
  return {};
}
