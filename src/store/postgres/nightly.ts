import type { NightlyStore } from "../../core/nightly";
import type { PgHandle } from "./open";

/** nightly/ on PostgreSQL: written once the engine base (connection, schema) lands. */
export function pgNightly(_h: PgHandle): NightlyStore {
  return {} as NightlyStore;
}
