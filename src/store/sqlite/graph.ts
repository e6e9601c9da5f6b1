import type { GraphStore } from "../../core/graph";
import type { Store as SqliteHandle } from "./open";

/** graph/ on SQLite. */
export function sqliteGraph(_h: SqliteHandle): GraphStore {
  return {};
}
