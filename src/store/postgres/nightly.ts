import type { NightlyStore } from "../../core/nightly";
import type { PgHandle } from "./open";

/** nightly/ on PostgreSQL. */
export function pgNightly(_h: PgHandle): NightlyStore {
  return {};
}
