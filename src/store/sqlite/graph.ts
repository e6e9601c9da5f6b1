import type { GraphStore } from "../../core/graph";
import type { SqliteHandle } from "./storage";

/** graph/ on SQLite. */
export function sqliteGraph(_h: SqliteHandle): GraphStore {
  return {};
}
