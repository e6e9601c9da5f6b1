import type { MemoriesBulkStore } from "../../core/memories/store-bulk";
import type { PgHandle } from "./open";

/** The bulk side of memories/ on PostgreSQL (placeholder until the engine base lands: every method refuses). */
export function pgMemoriesBulk(_h: PgHandle): MemoriesBulkStore {
  const notYet = async (): Promise<never> => {
    throw new Error("the PostgreSQL engine is not built yet");
  };
  return {
    listPage: notYet,
    listRows: notYet,
    countSelected: notYet,
    filterIds: notYet,
    deleteSelected: notYet,
    facets: notYet,
    countMemories: notYet,
    embedderState: notYet,
    exportRows: notYet,
    importRows: notYet,
    copyTo: notYet,
    reembedRows: notYet,
    applyReembed: notYet,
    finishReembed: notYet,
    seqsBetween: notYet,
    migrateRead: notYet,
    migrateCursor: notYet,
    migrateWrite: notYet,
  };
}
