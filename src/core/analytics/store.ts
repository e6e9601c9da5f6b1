/**
 * What analytics/ needs from storage: dashboard series, recall adoption, domains, account data.
 * One implementation per engine: src/store/sqlite/analytics.ts and src/store/postgres/analytics.ts.
 * Every method is async (PostgreSQL answers over the network); writes that belong
 * together are one method, so each engine runs them in one transaction.
 */
export interface AnalyticsStore {}
