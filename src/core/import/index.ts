// What other parts of memsvc use from import/: explicit named exports only.
export { importItems, prepareImport } from "./bulk";
export type { ImportOptions, ImportOutcome, StoredRows } from "./bulk";
export { exportMarkdown } from "./export-markdown";
export type { MarkdownExportSummary } from "./export-markdown";
export { parseFrontMatter, splitMarkdown } from "./markdown";
export { readSource } from "./readers";
export { IMPORT_KINDS } from "./types";
export type { ImportItem, ImportKind, ReadResult, SourceProblem } from "./types";
