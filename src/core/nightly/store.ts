/**
 * What nightly/ needs from storage: nightly runs (lease, cursor, digest), decay, merges, learnings, dropped rejects.
 * One implementation per engine: src/store/sqlite/nightly.ts and src/store/postgres/nightly.ts.
 * Every method is async (PostgreSQL answers over the network); writes that belong
 * together are one method, so each engine runs them in one transaction.
 */
export interface NightlyStore {}
