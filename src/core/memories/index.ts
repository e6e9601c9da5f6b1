// What other parts of memsvc use from memories/: explicit named exports only.
export { anchorsForRepo, markStale, parseAnchors, staleNote, staleOf, writeAnchors } from "./anchors";
export type { AnchorInput, AnchorView, StaleMark } from "./anchors";
export { memoryDetail } from "./detail";
export { feedbackCounts, giveFeedback, reviewMemory } from "./feedback";
export type { FeedbackInput, FeedbackResult } from "./feedback";
export { currentMarks, feedbackMarks, needsReview } from "./feedback-marks";
export type { FeedbackMarksCache, MemoryMarks } from "./feedback-marks";
export type { FeedbackEventRow, FeedbackStore } from "./feedback-store";
export { memoryHistory, restoreVersion } from "./history";
export { absorbHistory, currentSnapshot, recordVersion } from "./versions";
export type { HistoryView } from "./history";
export {
  citation,
  countSession,
  deleteMemory,
  fetchMemory,
  liveIndex,
  optionalString,
  requireContent,
  resolveInScope,
  resolveMemory,
  rowsBySeq,
  toView,
  updateMemory,
} from "./memories";
export type { MemoryView, NewMemory, UpdateResult } from "./memories";
export { backupTo, defaultBackupName, exportAll, importAll } from "./portability";
export { runReembed } from "./reembed";
export { effectiveStrength, round3, strengthenedOnUse } from "./strength";
export { DEFAULT_DOMAIN, MAX_TAGS, deriveTags, normalizeTag, tagsOf } from "./tags";
export type { Tag } from "./tags";
export { MEMORY_TYPES, normalizeMemoryType } from "./types";
export type { MemoryType } from "./types";
export type { AnchorRow, ConfirmedAnchor, RecheckAnchorRow, MemoriesStore, MemoryRow, NewMemoryRow, VersionRow } from "./store";
