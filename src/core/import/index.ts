// What other parts of memsvc use from import/: explicit named exports only.
export { importItems, prepareImport } from "./bulk";
export type { ImportOutcome } from "./bulk";
export { exportMarkdown } from "./export-markdown";
export { splitMarkdown } from "./markdown";
export { readSource } from "./readers";
export { IMPORT_KINDS } from "./types";
export type { ImportItem, ImportKind, ReadResult } from "./types";
