import type { MemoriesBulkStore } from "../../core/memories/store-bulk";
import type { PgHandle } from "./open";

/** The bulk side of memories/ on PostgreSQL. */
export function pgMemoriesBulk(_h: PgHandle): MemoriesBulkStore {
  return {};
}
