/**
 * What memories/ needs from storage: memory rows, their vectors, tags, anchors, history versions, events, re-embedding, export/import.
 * One implementation per engine: src/store/sqlite/memories.ts and src/store/postgres/memories.ts.
 * Every method is async (PostgreSQL answers over the network); writes that belong
 * together are one method, so each engine runs them in one transaction.
 * Core composes several of them inside `Storage.transaction` (ingest, update).
 */
import type { MemoriesBulkStore } from "./store-bulk";
import type { ProjectScope } from "../scope";
import type { StaleMark } from "./anchors";

/** A memory as storage holds it. Times are ms since the epoch; `seq` is the engine's row number (the vector index's key). */
export interface MemoryRow {
  seq: number;
  id: string;
  content: string;
  memoryType: string;
  project: string | null;
  sourceAgent: string;
  sourceAgentId: string | null;
  sourceDomain: string | null;
  sourceSession: string | null;
  privacy: string;
  createdAt: number;
  updatedAt: number;
  refreshedAt: number;
  strength: number;
  shownCount: number;
  usedCount: number;
  lastShownAt: number | null;
  lastUsedAt: number | null;
  linkCount: number;
}

/** A new memory with everything written with it: its vector and its domain tags. */
export type NewMemoryRow = Omit<MemoryRow, "seq" | "shownCount" | "usedCount" | "lastShownAt" | "lastUsedAt" | "linkCount"> & {
  vector: Float32Array;
  tags: readonly { tag: string; weight: number }[];
  /** The member (token name) whose request created it; null: the server itself, or before tokens. */
  createdBy?: string | null;
};

/** The fields PATCH /memory may change. */
export interface MemoryChange {
  content?: string;
  project?: string | null;
  memoryType?: string;
  updatedAt: number;
}

export interface MemoryTagRow {
  memoryId: string;
  tag: string;
  weight: number;
}

/** A link at either end of a memory, with the other memory's head (detail view). */
export interface MemoryLinkRow {
  id: string;
  /** The first `previewChars` characters of the other memory's content. */
  head: string;
  /** The other memory's full content length. */
  length: number;
  memoryType: string;
  relationship: string;
  weight: number;
  direction: "out" | "in";
}

/** The part of a memory a history version keeps. */
export interface MemorySnapshot {
  content: string;
  memoryType: string;
  project: string | null;
}

export interface VersionRow extends MemorySnapshot {
  version: number;
  reason: string;
  sourceId: string | null;
  replacedAt: number;
}

export interface AnchorRow {
  memoryId: string;
  repo: string;
  branch: string | null;
  commit: string;
  paths: string[];
  anchoredAt: number;
  stale: StaleMark | null;
  /** When the nightly re-check last confirmed the memory against this anchor's code, or null. */
  confirmedAt: number | null;
}

/** An anchor as the nightly re-check reads it: its raw mark (compared on write) and its evidence. */
export interface RecheckAnchorRow {
  memoryId: string;
  repo: string;
  commit: string;
  paths: string[];
  /** The mark as stored (JSON text): a settle only applies while the anchor still holds exactly this mark. */
  staleText: string;
  /** The mark's substance the model last answered for, or null. */
  rechecked: string | null;
  evidence: string | null;
}

/** What a confirmation makes of an anchor: it now points at the code the model checked it against. */
export interface ConfirmedAnchor {
  commit: string;
  paths: string[];
  at: number;
}

export interface MemoriesStore extends MemoriesBulkStore {
  /** Inserts memories with their vectors and tags, in one transaction; returns each one's seq, in order. */
  insertMemories(rows: readonly NewMemoryRow[]): Promise<number[]>;
  /** How many memories came from this source session (ingest dedup). */
  countSession(session: string): Promise<number>;
  /**
   * countSession inside a transaction, holding the session until it ends: two
   * servers ingesting one session at once cannot both count 0 (SQLite: the
   * write lock already serialises; PostgreSQL: an advisory transaction lock).
   */
  claimSession(session: string): Promise<number>;
  memoryById(id: string): Promise<MemoryRow | null>;
  /** Memories whose id starts with `prefix` (lower-case hex), at most `limit`. */
  memoriesByIdPrefix(prefix: string, limit: number): Promise<MemoryRow[]>;
  /** Memories by seq, in no particular order (missing seqs are absent). */
  memoriesBySeq(seqs: readonly number[]): Promise<MemoryRow[]>;
  /** A use: used counter, last use, decay clock, new strength and a "used" event, in one transaction; null when the memory is gone. */
  markUsed(id: string, at: number, strength: number): Promise<MemoryRow | null>;
  /** Changes fields of one memory; null when it is gone. The full-text index follows. */
  updateMemory(id: string, change: MemoryChange): Promise<MemoryRow | null>;
  /** Replaces the stored vector of memory `seq`. */
  setVector(seq: number, vector: Float32Array): Promise<void>;
  /** Deletes memories with their vectors, tags, links, anchors and versions, in one transaction; returns the links removed. */
  deleteMemories(ids: readonly string[]): Promise<number>;

  /** Replaces the tags of one memory. */
  writeTags(memoryId: string, tags: readonly { tag: string; weight: number }[]): Promise<void>;
  /** Tags of many memories, ordered by memory, weight (strongest first), tag. */
  tagsOf(memoryIds: readonly string[]): Promise<MemoryTagRow[]>;
  /** Links at either end of a memory, strongest first (ties by id), at most `limit`; within a scope, only to memories in it. */
  linksOf(memoryId: string, previewChars: number, limit: number, scope?: ProjectScope): Promise<MemoryLinkRow[]>;

  /** The current content, type and project of a memory (what a change is about to replace). */
  snapshot(memoryId: string): Promise<MemorySnapshot | null>;
  /** Keeps `v` as the memory's next version, dropping versions beyond the newest `keep`; returns its number. */
  addVersion(memoryId: string, v: Omit<VersionRow, "version">, keep: number): Promise<number>;
  /** A memory's versions, oldest first. */
  versions(memoryId: string): Promise<VersionRow[]>;
  version(memoryId: string, version: number): Promise<VersionRow | null>;
  deleteVersions(memoryId: string): Promise<void>;

  /** Anchored paths of these memories in `repo`, by memory id (absent: no anchor there). */
  anchorPaths(memoryIds: readonly string[], repo: string): Promise<Map<string, string[]>>;
  /**
   * Writes anchors (one per memory and repo: a new commit replaces the old one
   * and clears its stale mark, re-check state and confirmation). `evidence`
   * replaces the stored excerpt when given; absent or null keeps it.
   */
  upsertAnchors(rows: readonly (Omit<AnchorRow, "stale" | "confirmedAt"> & { evidence?: string | null })[]): Promise<void>;
  /** Anchors of these memories, ordered by memory, newest anchor first, repo. */
  anchorsOf(memoryIds: readonly string[]): Promise<AnchorRow[]>;
  /** Stale marks of these memories, the most recently marked first. */
  staleMarks(memoryIds: readonly string[]): Promise<{ memoryId: string; stale: StaleMark }[]>;
  /** Every anchor in a repository, oldest first; within a scope, of its memories only. */
  repoAnchors(repo: string, scope?: ProjectScope): Promise<AnchorRow[]>;
  /**
   * Sets stale marks and clears them (`fresh`) in one transaction. An id
   * without an anchor in `repo` counts as unknown.
   */
  markStale(
    repo: string,
    marks: readonly { id: string; mark: StaleMark }[],
    fresh: readonly string[],
    at: number,
  ): Promise<{ marked: number; cleared: number; unknown: number }>;

  // --- the nightly re-check of stale memories ---
  /** Marked anchors, the longest-marked first, at most `limit` (with or without evidence). */
  staleAnchors(limit: number): Promise<RecheckAnchorRow[]>;
  /** The stored evidence excerpts of a memory, by repo (GET /memory?evidence=true). */
  evidenceOf(memoryId: string): Promise<{ repo: string; evidence: string }[]>;
  /**
   * Settles one anchor's mark if it still holds `staleText` (else false: a
   * newer mark came meanwhile, and waits for the next run): "checked" records
   * that the model answered for `rechecked` and keeps the mark; a
   * ConfirmedAnchor moves the anchor, clears the mark and stamps the
   * confirmation; "delete" removes the anchor (nothing left to check against).
   */
  settleAnchor(
    memoryId: string,
    repo: string,
    staleText: string,
    outcome: { kind: "checked"; rechecked: string } | { kind: "confirmed"; anchor: ConfirmedAnchor } | { kind: "delete" },
  ): Promise<boolean>;
}
