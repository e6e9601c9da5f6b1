// What other parts of memsvc use from search/: explicit named exports only.
export { calibrationDue, ensureCalibration, loadThresholds, thresholds } from "./calibration";
export type { Thresholds } from "./calibration";
export { fromSql, recent } from "./recent";
export type { RecentHit } from "./recent";
export { absoluteRelevance, parseMinScore } from "./score";
export { queryKeywords } from "./query";
export { queryVector } from "./query-vector";
export { documentFrequency } from "./frequency";
export { documentFrequencyNow, fullTextNow, nearestNow, parseLimit, parseProject, parseQuery, rank, search } from "./search";
export type { SearchResult } from "./search";
export { warmVectorScan, warmWordCounts } from "./warm";
export type { IndexState, SearchStore, VectorHit, VectorIndexControl, VectorMirror } from "./store";
