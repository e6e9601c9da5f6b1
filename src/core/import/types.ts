import type { MemoryType } from "../memories";

/** The sources `memsvc import --from` reads. */
export const IMPORT_KINDS = ["claude-mem", "claude-code", "agents-md", "mem0", "markdown", "memsvc"] as const;
export type ImportKind = (typeof IMPORT_KINDS)[number];

/** A link an item names, resolved by key once every item is written (the target may come later). */
export interface ItemLink {
  to: string;
  relationship: string;
  weight?: number;
}

/**
 * One memory-sized piece of a source, whatever the tool: every reader yields
 * these and one write path (bulk.ts) stores them.
 */
export interface ImportItem {
  content: string;
  memoryType: MemoryType;
  project: string | null;
  createdAt: number;
  /** Kept when the source carries them (memsvc's own exports); otherwise import time and the initial strength. */
  updatedAt?: number;
  strength?: number;
  /** The tool the memory came from ("claude-mem", "claude-code", "mem0", ...). */
  sourceAgent: string;
  /** Where in the source: "file:line" or "database#table/row"; stored as the memory's source_session. */
  provenance: string;
  tags: string[];
  /** Names other items' links use for this one (a note's file name, title, id...). */
  keys: string[];
  links: ItemLink[];
}

/** A file or record the reader refused, with why, in one line. */
export interface SourceProblem {
  source: string;
  message: string;
}

export interface ReadResult {
  items: ImportItem[];
  problems: SourceProblem[];
  /** Files (or databases) read without a problem. */
  sources: number;
  /** A chunk of a streamed folder: files read so far and in all. */
  of?: { done: number; total: number };
}

export interface ReaderOptions {
  /** Clock for items without a date of their own. */
  now: number;
}
