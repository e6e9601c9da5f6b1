import type { DistillStore } from "../../core/distill";
import type { PgHandle } from "./open";

const notYet = async (): Promise<never> => {
  throw new Error("distill on PostgreSQL waits for the engine base (src/store/postgres/open.ts)");
};

/** distill/ on PostgreSQL: placeholder until the engine base lands. */
export function pgDistill(_h: PgHandle): DistillStore {
  return { segmentCount: notYet, claimSegment: notYet, setSegmentCount: notYet, memoriesBySeq: notYet, idsWithPrefix: notYet, mergeTarget: notYet, strengthen: notYet, rewrite: notYet, recordDropped: notYet };
}
