/**
 * What recall/ needs from storage: recall-index sessions, turns, shown (suppression) state, running topics.
 * One implementation per engine: src/store/sqlite/recall.ts and src/store/postgres/recall.ts.
 * Every method is async (PostgreSQL answers over the network); writes that belong
 * together are one method, so each engine runs them in one transaction.
 */
export interface RecallStore {}
