// What other parts of memsvc use from search/: explicit named exports only.
export { calibrationDue, ensureCalibration, thresholds } from "./calibration";
export type { Thresholds } from "./calibration";
export { saveIndex, startIndex, syncIndex } from "./index-sync";
export type { IndexState } from "./index-sync";
export { KERNEL_DIMS, int8Kernel } from "./int8-kernel";
export { fromSql, recent } from "./recent";
export type { RecentHit } from "./recent";
export { absoluteRelevance, parseMinScore } from "./score";
export { bm25Candidates, bm25Expression, documentFrequency, ftsExpression, parseLimit, parseProject, parseQuery, rank, search } from "./search";
export type { SearchResult } from "./search";
export { VectorIndex } from "./vector-index";
export type { SearchStore } from "./store";
