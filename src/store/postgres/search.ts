import type { SearchStore } from "../../core/search";
import type { PgHandle } from "./open";

/** search/ on PostgreSQL (placeholder until the engine base lands). */
export function pgSearch(_h: PgHandle): SearchStore {
  const notYet = () => {
    throw new Error("search on PostgreSQL is not built yet");
  };
  return {
    index: { size: 0, has: () => false, upsert: () => {}, remove: () => {}, regroup: () => {} },
    startIndex: notYet,
    closeIndex: () => {},
    nearest: notYet,
    fullText: notYet,
    documentFrequency: notYet,
    scoringRows: notYet,
    contentPrefixes: notYet,
    neighbours: notYet,
    recent: notYet,
    calibration: notYet,
    saveCalibration: notYet,
    sampleVectors: notYet,
    reembedPending: notYet,
  };
}
