import type { MemoriesStore } from "../../core/memories";
import type { PgHandle } from "./open";

/** memories/ on PostgreSQL (placeholder until the engine base lands). */
export function pgMemories(_h: PgHandle): MemoriesStore {
  return {} as MemoriesStore;
}
