// What other parts of memsvc use from nightly/: explicit named exports only.
export { learnings, listLearnings, renderLearnings } from "./learnings";
export type { LearningView } from "./learnings";
export { NightlyInterrupted, NightlyLeaseLost, daysToRun, defaultDay, latestDigests, owedDays, parseDay, runNightly } from "./nightly";
export type { NightlyDigest, NightlyProgress } from "./nightly";
export { runScheduledNightly, startNightlySchedule } from "./scheduler";
export type { NightlyMergeRow, NightlyRunRow, NightlyStore } from "./store";
