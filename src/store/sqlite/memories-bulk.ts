import type { MemoriesBulkStore } from "../../core/memories/store-bulk";
import type { SqliteHandle } from "./storage";

/** The bulk side of memories/ on SQLite. */
export function sqliteMemoriesBulk(_h: SqliteHandle): MemoriesBulkStore {
  return {};
}
