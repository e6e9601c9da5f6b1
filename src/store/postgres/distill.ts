import type { DistillStore } from "../../core/distill";
import type { PgHandle } from "./open";

/** distill/ on PostgreSQL. */
export function pgDistill(_h: PgHandle): DistillStore {
  return {};
}
