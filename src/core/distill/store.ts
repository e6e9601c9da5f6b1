/**
 * What distill/ needs from storage: segment dedup keys, the memories it reads
 * while planning (near-duplicates, link targets, ids the model names), the
 * near-duplicate merge, and the dropped-fragment log.
 * One implementation per engine: src/store/sqlite/distill.ts and src/store/postgres/distill.ts.
 * Every method is async (PostgreSQL answers over the network). The writes of
 * one segment run inside `Storage.transaction`, through its `tx.distill`.
 */
export interface DistillStore {
  /** The memory count stored with a segment key, or null when the key is not stored. */
  segmentCount(key: string): Promise<number | null>;
  /**
   * Claims a segment key (memory count 0) unless it is stored: true when this
   * call inserted it. A UNIQUE key, not a read-then-write: of two transactions
   * claiming one key at once, exactly one gets true; the other waits for the
   * first to commit (PostgreSQL) or runs after it (SQLite's single writer)
   * and gets false. Call inside a transaction, before the segment's writes.
   */
  claimSegment(key: string, sessionId: string, at: number): Promise<boolean>;
  /** Sets the memory count of a segment this transaction claimed. */
  setSegmentCount(key: string, count: number): Promise<void>;
  /** id, content and project of the memories at these seqs (any order; missing ones left out). */
  memoriesBySeq(seqs: readonly number[]): Promise<DistillMemoryRow[]>;
  /** Up to `limit` ids starting with `prefix`, in id order. */
  idsWithPrefix(prefix: string, limit: number): Promise<string[]>;
  /** seq and stored strength of a near-duplicate about to be strengthened; null when it is gone. */
  mergeTarget(id: string): Promise<{ seq: number; strength: number } | null>;
  /** A near-duplicate repeated: new strength, refreshed now. */
  strengthen(seq: number, strength: number, now: number): Promise<void>;
  /** A near-duplicate restated: new text and its vector, new strength, refreshed and updated now. */
  rewrite(seq: number, content: string, vector: Float32Array, strength: number, now: number): Promise<void>;
  /** Fragments the substance gate (or the model) rejected, kept for the nightly log. */
  recordDropped(at: number, dropped: readonly { reason: string; content: string }[]): Promise<void>;
}

export interface DistillMemoryRow {
  seq: number;
  id: string;
  content: string;
  project: string | null;
}
