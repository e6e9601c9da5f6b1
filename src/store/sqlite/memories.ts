import type { MemoriesStore } from "../../core/memories";
import type { SqliteHandle } from "./storage";

/** memories/ on SQLite. */
export function sqliteMemories(_h: SqliteHandle): MemoriesStore {
  return {};
}
