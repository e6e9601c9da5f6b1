import type { NightlyStore } from "../../core/nightly";
import type { Store as SqliteHandle } from "./open";

/** nightly/ on SQLite. */
export function sqliteNightly(_h: SqliteHandle): NightlyStore {
  return {};
}
