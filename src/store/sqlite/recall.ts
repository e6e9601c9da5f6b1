import type { RecallStore } from "../../core/recall";
import type { Store as SqliteHandle } from "./open";

/** recall/ on SQLite. */
export function sqliteRecall(_h: SqliteHandle): RecallStore {
  return {};
}
