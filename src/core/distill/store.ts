/**
 * What distill/ needs from storage: segment dedup keys and the distill write of a segment's memories.
 * One implementation per engine: src/store/sqlite/distill.ts and src/store/postgres/distill.ts.
 * Every method is async (PostgreSQL answers over the network); writes that belong
 * together are one method, so each engine runs them in one transaction.
 */
export interface DistillStore {}
