import type { DistillStore } from "../../core/distill";
import type { Store as SqliteHandle } from "./open";

/** distill/ on SQLite. */
export function sqliteDistill(_h: SqliteHandle): DistillStore {
  return {};
}
