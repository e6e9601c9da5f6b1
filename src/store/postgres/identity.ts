import type { IdentityStore } from "../../core/identity";
import type { PgHandle } from "./open";

/** identity/ on PostgreSQL: placeholder until the engine base lands (sections stay files until then). */
export function pgIdentity(_h: PgHandle): IdentityStore {
  return { sections: null };
}
