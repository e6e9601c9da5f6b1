import type { MemoriesStore } from "../../core/memories";
import type { PgHandle } from "./open";

/** memories/ on PostgreSQL. */
export function pgMemories(_h: PgHandle): MemoriesStore {
  return {};
}
