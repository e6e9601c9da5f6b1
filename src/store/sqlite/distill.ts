import type { DistillStore } from "../../core/distill";
import type { SqliteHandle } from "./storage";

/** distill/ on SQLite. */
export function sqliteDistill(_h: SqliteHandle): DistillStore {
  return {};
}
