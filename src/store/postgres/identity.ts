import type { IdentityStore } from "../../core/identity";
import type { PgHandle } from "./open";

/** identity/ on PostgreSQL. */
export function pgIdentity(_h: PgHandle): IdentityStore {
  return {};
}
