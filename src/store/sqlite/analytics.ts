import type { AnalyticsStore } from "../../core/analytics";
import type { SqliteHandle } from "./storage";

/** analytics/ on SQLite. */
export function sqliteAnalytics(_h: SqliteHandle): AnalyticsStore {
  return {};
}
