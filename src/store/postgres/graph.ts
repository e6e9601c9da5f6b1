import type { GraphStore } from "../../core/graph";
import type { PgHandle } from "./open";

/** graph/ on PostgreSQL. */
export function pgGraph(_h: PgHandle): GraphStore {
  return {};
}
