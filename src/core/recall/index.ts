// What other parts of memsvc use from recall/: explicit named exports only.
export { recallCandidates } from "./gates";
export { RECALL_HEADING, gist, isShortPrompt, recallIndex, recallWithVector, renderIndex, withinBudget } from "./recall";
export { expireRecallSessions } from "./sessions";
export { promptTerms } from "./terms";
export { blendTopic, nextTopic } from "./topic";
export type { SessionTopic } from "./topic";
export type { RecallExpiry, RecallMemoryRow, RecallStore, RecallTurn, RecallTurnEnd } from "./store";
