import type { AnalyticsStore } from "../../core/analytics";
import type { Store as SqliteHandle } from "./open";

/** analytics/ on SQLite. */
export function sqliteAnalytics(_h: SqliteHandle): AnalyticsStore {
  return {};
}
