/**
 * What memories/ needs from storage: memory rows, their vectors, tags, anchors, history versions, events, re-embedding, export/import.
 * One implementation per engine: src/store/sqlite/memories.ts and src/store/postgres/memories.ts.
 * Every method is async (PostgreSQL answers over the network); writes that belong
 * together are one method, so each engine runs them in one transaction.
 */
import type { MemoriesBulkStore } from "./store-bulk";

export interface MemoriesStore extends MemoriesBulkStore {}
