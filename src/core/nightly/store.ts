/**
 * What nightly/ needs from storage: nightly runs (lease, cursor, digest), decay, merges, learnings, dropped rejects.
 * One implementation per engine: src/store/sqlite/nightly.ts and src/store/postgres/nightly.ts.
 * Every method is async (PostgreSQL answers over the network); writes that belong
 * together are one method, or core wraps several in `Storage.transaction`.
 * Times are ms since the epoch; `cursor` and `digest` are JSON text the engine stores as is.
 */
import type { MemoryRow } from "../memories";

/** One row of nightly_runs. */
export interface NightlyRunRow {
  id: number;
  day: string;
  status: string;
  forced: boolean;
  owner: string;
  startedAt: number;
  heartbeatAt: number;
  finishedAt: number | null;
  cursor: string;
  digest: string;
}

/** What a claim saw of a run; a take-over succeeds only if the row still matches it (compare-and-set). */
export interface NightlyRunSeen {
  id: number;
  owner: string;
  status: string;
  heartbeatAt: number;
}

/** A memory of the day, as the learn step hands it to the model. */
export interface NightlyDayRow {
  seq: number;
  id: string;
  content: string;
  memoryType: string;
  project: string | null;
  /** coalesce(project, ''): the learn cursor's first key. */
  pkey: string;
  createdAt: number;
}

/** What the merge step compares. */
export interface NightlyMergeRow {
  seq: number;
  id: string;
  memoryType: string;
  project: string | null;
  strength: number;
  refreshedAt: number;
  usedCount: number;
  linkCount: number;
}

export interface NightlyDecayParams {
  minShown: number;
  /** Strength is never lowered below this, and memories at or under it are left alone. */
  floor: number;
  factor: number;
  start: number;
  end: number;
}

export interface NightlyIndexCounts {
  byType: { memoryType: string; n: number }[];
  projects: { project: string | null; memories: number; learnings: number }[];
  domains: { domain: string; memories: number }[];
}

export interface NightlyStore {
  // --- runs: the lease, the cursor and the digest ---
  /** The newest run of `day`, or null. */
  lastRun(day: string): Promise<NightlyRunRow | null>;
  /**
   * Inserts a running run for `day`, atomically refused (null) when a run of
   * the day is running already (a unique index) or a run newer than
   * `afterId` exists (another server got there first).
   */
  startRun(run: { day: string; forced: boolean; owner: string; now: number; digest: string; afterId: number }): Promise<number | null>;
  /** Takes `seen` over for `owner` if the row is still as seen (one conditional UPDATE); false when another server changed it first. */
  takeOverRun(seen: NightlyRunSeen, next: { owner: string; now: number; forced: boolean; startedAt: number; cursor: string; digest: string }): Promise<boolean>;
  /** Stores progress and renews the lease; false when `owner` no longer holds the run. */
  saveRun(id: number, owner: string, progress: { cursor: string; digest: string; now: number }): Promise<boolean>;
  /** Renews the lease only; false when `owner` no longer holds the run. */
  heartbeat(id: number, owner: string, now: number): Promise<boolean>;
  /** Closes the run with its final status; false when `owner` no longer holds it. */
  finishRun(id: number, owner: string, final: { status: string; cursor: string; digest: string; now: number }): Promise<boolean>;
  /** The newest `n` runs, newest first. */
  latestRuns(n: number): Promise<{ id: number; status: string; digest: string }[]>;
  /** Days since `sinceDay` whose newest run is partial, oldest first. */
  partialDays(sinceDay: string): Promise<string[]>;

  // --- learn ---
  /** Memories of [start, end), learnings excluded, after (pkey, seq). */
  countDay(start: number, end: number, after: [string, number]): Promise<number>;
  /** The next `limit` of them in (pkey, seq) order. */
  dayRows(start: number, end: number, after: [string, number], limit: number): Promise<NightlyDayRow[]>;

  // --- merge ---
  /** Memories created or updated in [start, end) or from `session`, with seq > afterSeq, in seq order. */
  mergeCandidates(start: number, end: number, session: string, afterSeq: number, limit: number): Promise<NightlyMergeRow[]>;
  mergeRowsBySeq(seqs: readonly number[]): Promise<NightlyMergeRow[]>;
  /**
   * The `k` memories nearest to memory `seq` in its project (cosine), on an
   * engine that searches vectors in the database (PostgreSQL: pgvector).
   * Absent on SQLite: core asks the server's in-memory index instead.
   */
  nearest?(seq: number, k: number, project: string | null): Promise<{ seq: number; similarity: number }[]>;
  /** The stored float vector of a memory (the index holds an int8 copy). */
  vectorOf(seq: number): Promise<Float32Array | null>;
  /**
   * Folds `dropId`'s counters, links, tags, events and recall suppression into
   * `keepId` (strength capped at `maxStrength`). Its history and the row itself
   * are memories/' part of the merge; core runs all of it in one transaction.
   */
  foldInto(keepId: string, dropId: string, maxStrength: number): Promise<void>;

  // --- decay and prune ---
  /** Ignored memories (shown on the day, not used since) lose strength; returns how many (dryRun: would). */
  decayIgnored(p: NightlyDecayParams, dryRun: boolean): Promise<number>;
  /** Faded memories: not learnings, never used, created before `before`, effective strength under `floor`, not in `exclude`; weakest first. */
  pruneCandidates(p: { now: number; before: number; floor: number; limit: number; exclude: readonly string[] }): Promise<{ id: string; seq: number }[]>;
  /** The distiller's rejected fragments waiting to be reported, oldest first. */
  droppedFragments(): Promise<{ id: number; reason: string; content: string }[]>;
  /** Forgets reported fragments, up to and including `lastId`. */
  forgetDroppedFragments(lastId: number): Promise<void>;

  // --- learnings (GET /learnings, memsvc_learnings) ---
  /** Learnings created or updated since `since` (with a project: its own and the global ones), strongest first. */
  recentLearnings(p: { now: number; since: number; project: string | null; limit: number }): Promise<MemoryRow[]>;
  /** derived_from links of `ids`, ordered by target. */
  derivedFrom(ids: readonly string[]): Promise<{ fromId: string; toId: string }[]>;
  /** Counts by type, by project (top `top`) and by domain tag (top `top`). */
  indexCounts(top: number): Promise<NightlyIndexCounts>;
}
