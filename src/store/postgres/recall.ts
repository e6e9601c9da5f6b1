import type { RecallStore } from "../../core/recall";
import type { PgHandle } from "./open";

/** recall/ on PostgreSQL. */
export function pgRecall(_h: PgHandle): RecallStore {
  return {};
}
