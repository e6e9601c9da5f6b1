import type { MemoriesStore } from "../../core/memories";
import type { MemoriesBulkStore } from "../../core/memories/store-bulk";
import type { PgHandle } from "./open";

/** memories/ on PostgreSQL. */
export function pgMemories(_h: PgHandle): Omit<MemoriesStore, keyof MemoriesBulkStore> {
  return {};
}
