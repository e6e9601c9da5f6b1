import type { SearchStore } from "../../core/search";
import type { SqliteHandle } from "./storage";

/** search/ on SQLite. */
export function sqliteSearch(_h: SqliteHandle): SearchStore {
  return {};
}
