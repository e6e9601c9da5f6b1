/**
 * The bulk side of memories' storage: the memory list (browser), export and
 * import, backup, re-embedding and `memsvc migrate`. Kept apart from store.ts
 * (single memories) so each stays small. Implementations:
 * src/store/sqlite/memories-bulk.ts and src/store/postgres/memories-bulk.ts.
 */
export interface MemoriesBulkStore {}
