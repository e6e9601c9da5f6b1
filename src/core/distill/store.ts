/**
 * What distill/ needs from storage: segment dedup keys and the distill write of a segment's memories.
 * One implementation per engine: src/store/sqlite/distill.ts and src/store/postgres/distill.ts.
 * Every method is async (PostgreSQL answers over the network); writes that belong
 * together are one method, so each engine runs them in one transaction.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface DistillStore {}
