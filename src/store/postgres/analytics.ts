import type { AnalyticsStore } from "../../core/analytics";
import type { PgHandle } from "./open";

/** analytics/ on PostgreSQL. */
export function pgAnalytics(_h: PgHandle): AnalyticsStore {
  return {};
}
