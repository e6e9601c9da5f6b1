import type { NightlyStore } from "../../core/nightly";
import type { SqliteHandle } from "./storage";

/** nightly/ on SQLite. */
export function sqliteNightly(_h: SqliteHandle): NightlyStore {
  return {};
}
