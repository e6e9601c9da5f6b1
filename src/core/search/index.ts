// What other parts of memsvc use from search/: explicit named exports only.
export { calibrationDue, ensureCalibration, loadThresholds, thresholds } from "./calibration";
export type { Thresholds } from "./calibration";
export { recent } from "./recent";
export type { RecentHit } from "./recent";
export { absoluteRelevance, parseMinScore } from "./score";
export { queryKeywords } from "./query";
export { queryVector } from "./query-vector";
export { documentFrequency } from "./frequency";
export { nearestNow, parseLimit, parseProject, parseQuery, rank, search } from "./search";
export type { SearchExplain, SearchInput, SearchResult } from "./search";
export { roundParts } from "./parts";
export type { ScoreParts } from "./parts";
export { warmSearches, warmWordCounts } from "./warm";
export type { IndexState, SearchStore, VectorHit, VectorMirror } from "./store";
