import type { MemoriesStore } from "../../core/memories";
import type { MemoriesBulkStore } from "../../core/memories/store-bulk";
import type { SqliteHandle } from "./storage";

/** memories/ on SQLite. */
export function sqliteMemories(_h: SqliteHandle): Omit<MemoriesStore, keyof MemoriesBulkStore> {
  return {};
}
