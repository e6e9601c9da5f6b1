import type { ImportKind, ReaderOptions, ReadResult } from "../types";
import { readAgentsMd } from "./agents-md";
import { readClaudeCode } from "./claude-code";
import { readClaudeMem } from "./claude-mem";
import { readMarkdown } from "./markdown";
import { readMem0 } from "./mem0";
import { readMemsvcJsonl } from "./memsvc-jsonl";

const READERS: Record<ImportKind, (path: string, opts: ReaderOptions) => Promise<ReadResult>> = {
  "claude-mem": readClaudeMem,
  "claude-code": readClaudeCode,
  "agents-md": readAgentsMd,
  mem0: readMem0,
  markdown: readMarkdown,
  memsvc: readMemsvcJsonl,
};

/** Reads a source of `kind` at `path` into import items; problems are per file, one line each. */
export function readSource(kind: ImportKind, path: string, opts: ReaderOptions): Promise<ReadResult> {
  return READERS[kind](path, opts);
}
