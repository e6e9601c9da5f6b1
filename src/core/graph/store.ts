import type { NewMemoryRow } from "../memories";
import type { ProjectScope } from "../scope";

/**
 * What graph/ needs from storage: links between memories, neighbours, paths, export.
 * One implementation per engine: src/store/sqlite/graph.ts and src/store/postgres/graph.ts.
 * Every method is async (PostgreSQL answers over the network); writes that belong
 * together are one method, so each engine runs them in one transaction.
 * Link counts (`memories.link_count`, "connections") are kept by the engine itself
 * (triggers on both engines), so no method here touches them.
 *
 * Reads take a ProjectScope (null: every project). Within a scope only the
 * scope's memories are listed, followed or counted: a neighbour, a path step,
 * a link count ("connections") or a total never includes another project's
 * memory, and the filter runs in SQL so counts are right. Unscoped reads are
 * today's queries, unchanged.
 */
export interface GraphStore {
  /**
   * True when core's in-memory vector index finds the candidates for
   * linkToNearest (SQLite: the index is its vector search); false when the
   * database finds them itself (PostgreSQL: pgvector), and `near` is ignored.
   */
  readonly nearestFromIndex: boolean;

  /** Inserts links; an existing (from, to, relationship) keeps the stronger weight. */
  addLinks(links: readonly NewLink[], now: number): Promise<void>;

  /** Links a memory ("related", weight = cosine similarity) to its nearest other memories; returns how many. */
  linkToNearest(input: NearestLinks): Promise<number>;

  /**
   * Where the engine can do it in fewer round trips (PostgreSQL: one message):
   * inserts one memory with its vector and tags, as memories.insertMemories
   * does, then links it as linkToNearest would right after. Absent where the
   * candidates come from core's index (nearestFromIndex).
   */
  insertAndLink?(row: NewMemoryRow, link: Omit<NearestLinks, "memoryId" | "vector" | "project" | "near">): Promise<{ seq: number; links: number }>;

  /** Links at either end of `id` (optionally of one relationship), strongest first; within a scope, only links whose other end is in it. */
  linksOf(id: string, relationship: string | null, scope?: ProjectScope): Promise<LinkOf[]>;

  /** One breadth-first level: every link with an end in `frontier`, seen from that end, strongest first; within a scope, only to memories in it. */
  linksAround(frontier: readonly string[], scope?: ProjectScope): Promise<LinkAround[]>;

  /** Graph listing rows of the ids that exist (any order); within a scope, only the scope's, their link counts counting links within it. */
  memories(ids: readonly string[], at: GraphAt): Promise<GraphMemoryRow[]>;

  /** Memories with at least one link, most links first (then effective strength, then age); within a scope, links within it. */
  hubs(input: GraphAt & { domain: string | null; limit: number }): Promise<GraphMemoryRow[]>;

  /** The /viz slice and its store-wide (within a scope: scope-wide) counts, all read from one snapshot. */
  exportSlice(input: ExportQuery): Promise<ExportSlice>;
}

export interface NewLink {
  fromId: string;
  toId: string;
  /** Already normalised (normalizeRelationship). */
  relationship: string;
  /** Already clamped to 0..1. */
  weight: number;
}

export interface NearestLinks {
  memoryId: string;
  vector: Float32Array;
  project: string | null;
  /** At most this many links. */
  limit: number;
  minSimilarity: number;
  /** Never linked: the memory itself and the memories written in the same batch. */
  exclude: readonly string[];
  /** Candidates from core's index (by seq) when nearestFromIndex; null otherwise. */
  near: { seq: number; similarity: number }[] | null;
  now: number;
}

export interface LinkOf {
  other: string;
  relationship: string;
  weight: number;
  /** "out": the link points from the memory asked about to `other`. */
  direction: "out" | "in";
}

export interface LinkAround {
  /** The frontier end. */
  node: string;
  other: string;
  fromId: string;
  toId: string;
  relationship: string;
  weight: number;
}

/** The clock and preview length every listing is computed with. */
export interface GraphAt {
  now: number;
  previewChars: number;
  /** Absent or null: every project. */
  scope?: ProjectScope;
}

/** A memory as graph listings read it (core turns it into a GraphMemory). */
export interface GraphMemoryRow {
  id: string;
  /** The first previewChars characters of the content. */
  head: string;
  /** Length of the full content. */
  len: number;
  memoryType: string;
  project: string | null;
  createdAt: number;
  linkCount: number;
  /** Effective (decayed) strength at `now`. */
  eff: number;
  /** Primary domain: the highest-weight tag (ties by name), "general" without tags. */
  domain: string;
}

export interface ExportQuery extends GraphAt {
  type: string | null;
  tag: string | null;
  /** Primary domain filter. */
  domain: string | null;
  minStrength: number | null;
  limit: number;
}

export interface ExportNodeRow {
  id: string;
  head: string;
  len: number;
  memoryType: string;
  project: string | null;
  sourceAgent: string;
  createdAt: number;
  strength: number;
  linkCount: number;
  eff: number;
}

export interface ExportSlice {
  /** Strongest (effective) first, then newest, then id; at most `limit`. */
  rows: ExportNodeRow[];
  /** Rows passing the filters before the limit. */
  matched: number;
  totalMemories: number;
  totalLinks: number;
  /** Tags of the slice's memories, each memory's strongest first (weight desc, then name). */
  tags: { memoryId: string; tag: string; weight: number }[];
  /** Links with both ends in the slice. */
  edges: { source: string; target: string; relationship: string; weight: number }[];
  /** Memories per primary domain across the whole store ("general" for none). */
  storeDomains: { name: string; n: number }[];
  /** Memories per type across the whole store. */
  storeTypes: { name: string; n: number }[];
}
