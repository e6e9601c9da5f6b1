import type { AnalyticsStore } from "../../core/analytics";
import type { PgHandle } from "./open";

const notYet = async (): Promise<never> => {
  throw new Error("analytics on PostgreSQL waits for the engine base (src/store/postgres/open.ts)");
};

/** analytics/ on PostgreSQL: placeholder until the engine base lands. */
export function pgAnalytics(_h: PgHandle): AnalyticsStore {
  return { dashboardFigures: notYet, memoriesFingerprint: notYet, domainRows: notYet, domainSample: notYet };
}
