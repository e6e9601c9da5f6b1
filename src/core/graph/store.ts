/**
 * What graph/ needs from storage: links between memories, neighbours, paths, export.
 * One implementation per engine: src/store/sqlite/graph.ts and src/store/postgres/graph.ts.
 * Every method is async (PostgreSQL answers over the network); writes that belong
 * together are one method, so each engine runs them in one transaction.
 */
export interface GraphStore {}
