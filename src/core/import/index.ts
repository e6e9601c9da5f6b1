// What other parts of memsvc use from import/: explicit named exports only.
export { importItems, importPrepared } from "./bulk";
export type { ImportOutcome } from "./bulk";
export { exportMarkdown } from "./export-markdown";
export { splitMarkdown } from "./markdown";
export { prepareStream, storedHashes } from "./prepare";
export type { PreparedChunk } from "./prepare";
export { readSource, streamSource } from "./readers";
export { IMPORT_KINDS } from "./types";
export type { ImportItem, ImportKind, ReadResult, SourceProblem } from "./types";
