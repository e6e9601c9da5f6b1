import type { Logger } from "../log";
import type { MemoryRow } from "../memories";

/**
 * What search/ needs from storage: full-text ranking, nearest vectors, recent listing, term counts, similarity calibration.
 * One implementation per engine: src/store/sqlite/search.ts and src/store/postgres/search.ts.
 * Every method that reaches the database is async (PostgreSQL answers over the network).
 *
 * The vector index is the engine's: on SQLite an exact int8 copy of every
 * vector in this process's memory (vec0's own KNN is ~50 ms at 100k, the
 * copy ~3 ms), kept current across processes through the vector_changes log;
 * on PostgreSQL pgvector's HNSW index in the database. Core sees only
 * `nearest`, plus `index` for the few synchronous notifications an
 * in-process copy needs after this process's own committed writes.
 */
/** Awaited between slices of background reads: yields the event loop to requests (slices.ts). */
export type Pause = () => Promise<void> | void;

export interface SearchStore {
  /** The vector index's life cycle and this process's view of it (an object, not methods: synchronous, see VectorIndexControl). */
  readonly vectorIndex: VectorIndexControl;
  /** The `k` stored vectors closest to `vector` by cosine, optionally in one project ("" = memories without one). */
  nearest(vector: Float32Array, k: number, project?: string | null): Promise<VectorHit[]>;
  /**
   * nearest() for several queries at once (an import's batch), each leaving out the hits under
   * `minSimilarity`: the hits nearest() returns, filtered. Absent where the engine has no cheaper
   * way than one query each (PostgreSQL).
   */
  nearestMany?(queries: readonly { vector: Float32Array; k: number; project: string | null }[], minSimilarity: number): Promise<VectorHit[][]>;
  /**
   * Seqs of the best `k` full-text matches of any of `terms` (keywords, not
   * syntax), best first, optionally in one project. An engine may leave
   * words most of the store holds out of the matching on a large store (they
   * weigh next to nothing); `every` asks for an OR of exactly these terms.
   */
  fullText(terms: readonly string[], project: string | null, k: number, opts?: { every?: boolean }): Promise<number[]>;
  /** Memories holding `term`, counted up to `cap` (the answer is `cap` when at least that many do). Cached by the engine. */
  documentFrequency(term: string, cap: number): Promise<number>;
  /** What ranking needs of each candidate, its content's first `chars` characters included (rows deleted meanwhile are absent). */
  scoringRows(seqs: readonly number[], chars: number): Promise<ScoringRow[]>;
  /**
   * Links touching these memories (seqs), both directions: the seed's seq, the
   * link weight and the other end's scoring row (as scoringRows, `chars` of
   * its content). One read, so a networked engine answers the graph hop in
   * one round trip, beside scoringRows of the candidates.
   */
  neighbours(seeds: readonly number[], chars: number): Promise<{ seed: number; weight: number; other: ScoringRow }[]>;
  /** The `limit` most important memories (optionally of one project), exact, best first (see core/search/recent.ts). */
  recent(p: { now: number; project: string | null; limit: number }): Promise<RankedRow[]>;
  /** The stored calibration of an embedder, if any. */
  calibration(embedderId: string): Promise<{ memories: number; stats: string } | null>;
  saveCalibration(row: { embedderId: string; memories: number; computedAt: number; stats: string }): Promise<void>;
  /**
   * Up to `n` random stored vectors of the active vector space (none past a
   * pending re-embed's cursor). `pause` is awaited between slices of the
   * reads where they would hold this process's event loop (SQLite).
   */
  sampleVectors(n: number, pause?: Pause): Promise<{ seq: number; vector: Float32Array }[]>;
  /** Whether a re-embed is under way (the stored vectors are of mixed spaces). */
  reembedPending(): Promise<boolean>;
  /** The first `chars` characters of up to `n` random memories (the word-count warm-up's sample); `pause` as for sampleVectors. */
  sampleContents(n: number, chars: number, pause?: Pause): Promise<string[]>;
  /**
   * Synchronous forms of three reads, on an engine that answers in-process
   * (SQLite; absent on PostgreSQL). Only for callers that are still
   * synchronous (the domain index) until their capabilities'
   * stores are async: core reaches them through nearestNow / fullTextNow /
   * documentFrequencyNow, which throw on an engine without them.
   */
  readonly sync?: {
    nearest(vector: Float32Array, k: number, project?: string | null): VectorHit[];
    fullText(terms: readonly string[], project: string | null, k: number, opts?: { every?: boolean }): number[];
    documentFrequency(term: string, cap: number): number;
  };
}

export interface VectorHit {
  seq: number;
  /** Cosine similarity in [-1, 1]. */
  similarity: number;
}

/** Synchronous on purpose: start-up stays synchronous (createServices), and nothing here waits for the database. */
export interface VectorIndexControl {
  /** This process's view of the index, notified of its own committed writes (replaced by `start`). */
  readonly mirror: VectorMirror;
  /**
   * Starts (or, for a new embedder, restarts empty) the vector index: records
   * the active embedder, marks stored vectors of another one for re-embedding,
   * loads what the engine keeps in memory. Returns at once with the state;
   * `ready` resolves when vector search sees every stored vector. `quiet`
   * resolves at a lull in requests: upkeep that holds the event loop waits
   * for it.
   */
  start(opts: { embedderId: string; log: Logger; backgroundAbove?: number; quiet?: () => Promise<unknown> }): IndexState;
  /** Shutdown: stops a background load, saves what the next start can reuse, and waits for a save still writing. */
  close(): void | Promise<void>;
}

/**
 * Synchronous on purpose: they touch process memory only (the SQLite engine's
 * in-memory index), right after the caller's write committed, so this
 * process's next search sees it without a round trip.
 */
export interface VectorMirror {
  /** Vectors vector search holds (on an engine without an in-process copy: the stored count, refreshed within a second). */
  readonly size: number;
  /**
   * Memories the store holds, for word weights (IDF) and full-text planning:
   * `size` counts only what vector search holds, which is 0 while a large
   * index loads in the background and grows slowly during a re-embed (word
   * weights computed from it made every recall gate fail meanwhile).
   */
  readonly memories: number;
  has(seq: number): boolean;
  upsert(seq: number, vector: Float32Array, project: string | null): void;
  remove(seq: number): void;
  regroup(seq: number, project: string | null): void;
}

/** Where vector search stands against the database (reported by /health). */
export interface IndexState {
  status: "loading" | "ready";
  /** Vectors loaded so far / to load, while loading. */
  loaded: number;
  total: number;
  /** Resolves once vector search sees every stored vector. */
  ready: Promise<void>;
  /**
   * Resolves once the database records the active embedder's vector space
   * (embedder_id, and a re-embed cursor when stored vectors are of another
   * space). Absent where start() records it before returning (SQLite); on
   * PostgreSQL it is a round trip, and re-embedding must not look before it lands.
   */
  claimed?: Promise<void>;
  /** Engines with a change log: the last change applied. */
  cursor?: number;
  /** Set at shutdown: a background load stops at its next step. */
  stop?: boolean;
}

/** What ranking needs of a candidate; full rows are read for the returned few only. */
export interface ScoringRow {
  seq: number;
  id: string;
  project: string | null;
  strength: number;
  refreshedAt: number;
  /** The first characters of its content (as many as asked): what relevance reads. */
  text: string;
}

export type RankedRow = MemoryRow & { importance: number };
