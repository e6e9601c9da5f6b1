import type { RecallStore } from "../../core/recall";
import type { SqliteHandle } from "./storage";

/** recall/ on SQLite. */
export function sqliteRecall(_h: SqliteHandle): RecallStore {
  return {};
}
