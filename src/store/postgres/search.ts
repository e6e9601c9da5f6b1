import type { SearchStore } from "../../core/search";
import type { PgHandle } from "./open";

/** search/ on PostgreSQL. */
export function pgSearch(_h: PgHandle): SearchStore {
  return {};
}
