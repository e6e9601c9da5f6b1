import type { RecallStore } from "../../core/recall";
import type { PgHandle } from "./open";

/** recall/ on PostgreSQL (placeholder until the engine base lands: the storage's transaction refuses too). */
export function pgRecall(_h: PgHandle): RecallStore {
  const notYet = async (): Promise<never> => {
    throw new Error("the PostgreSQL engine is not built yet");
  };
  return { nextTurn: notYet, beginTurn: notYet, hasTopic: notYet, finishTurn: notYet, resetSession: notYet, expireSessions: notYet, candidateRows: notYet };
}
