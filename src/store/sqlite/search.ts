import type { SearchStore } from "../../core/search";
import type { Store as SqliteHandle } from "./open";

/** search/ on SQLite. */
export function sqliteSearch(_h: SqliteHandle): SearchStore {
  return {};
}
