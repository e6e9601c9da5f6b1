import type { ImportKind, ReaderOptions, ReadResult } from "../types";
import { readAgentsMd } from "./agents-md";
import { readClaudeCode } from "./claude-code";
import { readClaudeMem } from "./claude-mem";
import { readMarkdown } from "./markdown";
import { readMem0 } from "./mem0";
import { readMemsvcJsonl } from "./memsvc-jsonl";

/** A source read as it goes: folders a chunk of files at a time, single files (a database, an export) in one chunk. */
type Reader = (path: string, opts: ReaderOptions) => AsyncIterable<ReadResult>;
const whole = (read: (path: string, opts: ReaderOptions) => Promise<ReadResult>): Reader =>
  async function* (path, opts) {
    yield await read(path, opts);
  };

const READERS: Record<ImportKind, Reader> = {
  "claude-mem": whole(readClaudeMem),
  "claude-code": readClaudeCode,
  "agents-md": readAgentsMd,
  mem0: whole(readMem0),
  markdown: readMarkdown,
  memsvc: whole(readMemsvcJsonl),
};

/** Reads a source of `kind` at `path` as chunks of import items; problems are per file, one line each. */
export function streamSource(kind: ImportKind, path: string, opts: ReaderOptions): AsyncIterable<ReadResult> {
  return READERS[kind](path, opts);
}

/** The whole source at once (tests, small sources): the chunks of streamSource joined. */
export async function readSource(kind: ImportKind, path: string, opts: ReaderOptions): Promise<ReadResult> {
  const out: ReadResult = { items: [], problems: [], sources: 0 };
  for await (const c of streamSource(kind, path, opts)) {
    for (const it of c.items) out.items.push(it);
    out.problems.push(...c.problems);
    out.sources += c.sources;
  }
  return out;
}
