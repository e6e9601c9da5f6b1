import type { GraphStore } from "../../core/graph";
import type { PgHandle } from "./open";

/** graph/ on PostgreSQL (placeholder until the engine base lands). */
export function pgGraph(_h: PgHandle): GraphStore {
  const notYet = async (): Promise<never> => {
    throw new Error("the PostgreSQL engine is not built yet");
  };
  return { nearestFromIndex: false, addLinks: notYet, linkToNearest: notYet, linksOf: notYet, linksAround: notYet, memories: notYet, hubs: notYet, exportSlice: notYet };
}
