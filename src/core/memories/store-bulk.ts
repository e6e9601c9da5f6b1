/**
 * The bulk side of memories' storage: the memory list (browser), export and
 * import, backup, re-embedding and `memsvc migrate`. Kept apart from store.ts
 * (single memories) so each stays small. Implementations:
 * src/store/sqlite/memories-bulk.ts and src/store/postgres/memories-bulk.ts.
 */

/** The browser's filters other than the search query (that one is ranked by search, not by storage). */
export interface ListFilterSpec {
  project: string | null;
  type: string | null;
  domain: string | null;
  /** Inclusive bounds on created_at, ms since the epoch. */
  from: number | null;
  to: number | null;
  /** On effective (decayed) strength at `now`. */
  minStrength: number | null;
  usage: "never" | "shown" | "used" | null;
  /** Only these memories (the review filter: the ids core found marked), or null for no such limit. */
  ids: string[] | null;
}

/** One memory as the list shows it: the content's head only. */
export interface ListRow {
  seq: number;
  id: string;
  /** The first `previewChars` characters of the content. */
  head: string;
  /** The content's full length in characters. */
  length: number;
  memoryType: string;
  project: string | null;
  domain: string;
  sourceAgent: string;
  createdAt: number;
  strength: number;
  effectiveStrength: number;
  shownCount: number;
  usedCount: number;
  linkCount: number;
}

export interface ListPageRequest {
  sort: "newest" | "importance";
  /** Keyset: rows strictly after (sort key, seq) in descending order. */
  after: { key: number; seq: number } | null;
  limit: number;
  now: number;
  previewChars: number;
}

/** The row columns of one memory as export, import and migrate carry them (snake_case: the export format's field names). */
import type { ProjectScope } from "../scope";
export interface MemoryColumns {
  id: string;
  content: string;
  memory_type: string;
  project: string | null;
  source_agent: string;
  source_agent_id: string | null;
  source_domain: string | null;
  source_session: string | null;
  privacy: string;
  created_at: number;
  updated_at: number;
  refreshed_at: number;
  strength: number;
  shown_count: number;
  used_count: number;
  last_shown_at: number | null;
  last_used_at: number | null;
  /** The member token that created it (issue 36); older exports lack it (null). */
  created_by?: string | null;
}

export interface LinkRecord {
  from_id: string;
  to_id: string;
  relationship: string;
  weight: number;
  created_at: number;
}
export interface SegmentRecord {
  key: string;
  session_id: string;
  memory_count: number;
  created_at: number;
}
export interface EventRecord {
  memory_id: string;
  event: string;
  at: number;
  /** Feedback events: their JSON (note, receipt, vector); absent for shown and used. */
  detail?: string;
}

/** An event row as read: `detail` only when set (shown and used events stay as compact as before). */
export function eventRecord(r: { memory_id: string; event: string; at: number; detail?: string | null }): EventRecord {
  const e: EventRecord = { memory_id: r.memory_id, event: r.event, at: Number(r.at) };
  if (typeof r.detail === "string") e.detail = r.detail;
  return e;
}
export interface HistoryRecord {
  memory_id: string;
  version: number;
  content: string;
  memory_type: string;
  project: string | null;
  reason: string;
  source_id: string | null;
  replaced_at: number;
}
export interface AnchorRecord {
  memory_id: string;
  repo: string;
  branch: string | null;
  commit_id: string | null;
  paths: string;
  anchored_at: number;
  stale: string | null;
  stale_at: number | null;
  /** Added in 0.17 with the nightly re-check; older exports lack them (null). */
  evidence?: string | null;
  rechecked?: string | null;
  confirmed_at?: number | null;
}

/** A memory with what hangs off it; `seq` is kept by migrate (order and ids survive), assigned anew by import. */
export interface FullMemory extends MemoryColumns {
  seq?: number;
  tags: { tag: string; weight: number }[];
  vector: Float32Array | null;
}

/** Everything an export holds, record by record, in the order the format writes them. */
export type ExportRow =
  | { kind: "memory"; memory: FullMemory }
  | { kind: "link"; link: LinkRecord }
  | { kind: "segment"; segment: SegmentRecord }
  | { kind: "event"; event: EventRecord }
  | { kind: "history"; history: HistoryRecord }
  | { kind: "anchor"; anchor: AnchorRecord };

/** An identity section as exported: agent null for the global scope. */
export type IdentityExportRow = { kind: "identity"; identity: { agent: string | null; name: string; body: string } };

/** What import writes, all in one transaction. */
export interface ImportData {
  memories: FullMemory[];
  links: LinkRecord[];
  segments: SegmentRecord[];
  events: EventRecord[];
  history: HistoryRecord[];
  anchors: AnchorRecord[];
}

/** Import data as export records, in the order the format writes them (both engines write these). */
export function rowsOf(data: ImportData): ExportRow[] {
  return [
    ...data.memories.map((memory) => ({ kind: "memory" as const, memory })),
    ...data.links.map((link) => ({ kind: "link" as const, link })),
    ...data.segments.map((segment) => ({ kind: "segment" as const, segment })),
    ...data.events.map((event) => ({ kind: "event" as const, event })),
    ...data.history.map((history) => ({ kind: "history" as const, history })),
    ...data.anchors.map((anchor) => ({ kind: "anchor" as const, anchor })),
  ];
}

/** The tables migrate walks, in this order (memories first: the others point at them). */
export const MIGRATE_TABLES = ["memories", "links", "segments", "events", "history", "anchors"] as const;
export type MigrateTable = (typeof MIGRATE_TABLES)[number];

/** One batch read for migrate: rows after a position, and the position of the last one. */
export interface MigrateChunk {
  table: MigrateTable;
  /** Stable position of the last row read (seq or rowid on SQLite); null when the table holds no more. */
  last: number | null;
  rows: ExportRow[];
}

/** The reembed job's state, both values from the store's meta. */
export interface EmbedderState {
  embedderId: string | null;
  /** null: no pass pending; "0": from the start; otherwise the last seq redone. */
  reembedCursor: string | null;
}

export interface MemoriesBulkStore {
  // The memory browser (list.ts).
  listPage(f: ListFilterSpec, req: ListPageRequest): Promise<ListRow[]>;
  listRows(seqs: number[], now: number, previewChars: number): Promise<ListRow[]>;
  countSelected(f: ListFilterSpec, now: number): Promise<number>;
  /** Of the given ids, those the filters keep, with their seqs. */
  filterIds(ids: string[], f: ListFilterSpec, now: number): Promise<{ seq: number; id: string }[]>;
  /**
   * Deletes every memory the filters select (restricted to `onlySeqs` when
   * given) in one transaction, only if they number `confirm`; otherwise
   * deletes nothing and returns the count found.
   */
  deleteSelected(
    f: ListFilterSpec,
    now: number,
    onlySeqs: number[] | null,
    confirm: number,
  ): Promise<{ deleted: { seq: number; id: string }[]; linksRemoved: number } | { count: number }>;
  /** Projects and primary domains with their memory counts, busiest first; within a scope, of its memories only. */
  facets(scope?: ProjectScope): Promise<{ projects: { name: string; count: number }[]; domains: { name: string; count: number }[] }>;

  // Export, import, backup (portability.ts).
  countMemories(afterSeq?: number): Promise<number>;
  embedderState(): Promise<EmbedderState>;
  /**
   * Hands every record to `emit` from one consistent snapshot (a server may write meanwhile),
   * identity sections included where the engine keeps them in the database (PostgreSQL; on
   * SQLite they are the home's files and the caller reads them).
   */
  exportRows(opts: { vectors: boolean }, emit: (row: ExportRow | IdentityExportRow) => Promise<void>): Promise<void>;
  /**
   * Writes an export into an empty store in one transaction; returns the new
   * seqs (in input order) and the links added. `embedderId` names the vectors'
   * space: recorded as the store's when it has none yet.
   */
  importRows(data: ImportData, embedderId: string): Promise<{ seqs: number[]; links: number }>;
  /**
   * An import into an empty store: its secondary indexes are built once at the end instead of row
   * by row, crash-safe (the drop commits with a mark; the end of the import, or the next open of a
   * store an import left marked, builds them). False when the store holds memories (nothing
   * changed). Absent where the engine does not (PostgreSQL).
   */
  deferIndexes?(): Promise<boolean>;
  /** Builds what deferIndexes dropped (only what is missing) and clears its mark. */
  buildDeferredIndexes?(): Promise<void>;
  /** A physical copy of the database into `file` (an empty private file); false when the engine has none (PostgreSQL: use a logical export). */
  copyTo(file: string): Promise<boolean>;

  // Re-embedding (reembed.ts).
  reembedRows(afterSeq: number, limit: number): Promise<{ seq: number; content: string; project: string | null }[]>;
  /** Replaces the rows' vectors and moves the cursor to `cursor`, in one transaction, only if the state is still `expect`. */
  applyReembed(expect: { cursor: string; embedderId: string }, vectors: { seq: number; vector: Float32Array }[], cursor: string): Promise<boolean>;
  /** Clears the cursor (the pass is done) only if the state is still `expect`. */
  finishReembed(expect: { cursor: string; embedderId: string }): Promise<boolean>;
  seqsBetween(from: number, to: number): Promise<number[]>;

  // memsvc migrate (migrate.ts): read side on the source, write side on the target.
  migrateRead(table: MigrateTable, after: number, limit: number): Promise<MigrateChunk>;
  /** The cursor stored by the last migrateWrite (null before the first). */
  migrateCursor(): Promise<string | null>;
  /**
   * Writes rows (memories keep their seq), stores `cursor` and the embedder id
   * the vectors belong to, in one transaction; `finish` also moves id
   * sequences past the copied seqs.
   */
  migrateWrite(rows: ExportRow[], cursor: string, opts: { embedderId: string | null; finish: boolean }): Promise<void>;
}
