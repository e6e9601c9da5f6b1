import { DIMENSIONS } from "../../../embed/types";
import { VECTOR_RESCORE_FACTOR, VECTOR_RESCORE_MIN } from "./tuning";
import { QUERY_AT, ROWS_AT } from "./layout";
import { heapPush, heapReplaceTop, quantize } from "./select";
import { VectorSnapshots } from "./snapshot";
import { FLOAT_BLOCK_ROWS } from "./rows";

export type { IndexSnapshot } from "./snapshot";
export { quantize } from "./select";

export interface VectorHit {
  seq: number;
  /** Cosine similarity in [-1, 1]: the float query dotted with the row's float vector as stored. */
  similarity: number;
}

/**
 * In-memory mirror of the vec0 table, for the hot path. A vec0 KNN over 100k
 * float vectors costs ~50-75 ms here; this keeps an int8 copy (384 bytes) of
 * each vector in WebAssembly memory and scores rows with an int8 SIMD kernel
 * (exact int8 dot products), and the float vectors (rows.ts `floatBlocks`) to
 * rescore the few rows the int8 scores cannot settle. vec0 stays the durable
 * truth.
 *
 * Exact by construction (issue 38): a hit's similarity is the float query
 * dotted with the row's float vector as stored, and the result is the top k
 * by that, equal similarities by lowest seq. The int8 score (int8 query x
 * int8 row x both scales) differs from it by at most
 *   norm(int8 row) x norm(query - int8 query)            (the query's rounding)
 * + min(norm1(query) x scale / 2, norm(query) x norm(row - int8 row))  (the row's)
 * (Cauchy-Schwarz and Hoelder; every factor known per row), so rows are
 * rescored with their floats, best int8 score first, until the k-th float
 * similarity is above the bound of every row left. The int8 order only
 * decides the work; the 4-bit codes (projection.ts) are not used: a
 * projection to 128 of 384 dimensions has no useful bound
 * (docs/decisions/vector-index.md).
 */
export class VectorIndex extends VectorSnapshots {
  /** Top `k` by similarity, optionally within one group (project); equal similarities by lowest seq. */
  search(query: Float32Array, k: number, group?: string | null): VectorHit[] {
    if (this.loading) return [];
    this.beforeSearch?.();
    const wanted = group === undefined || group === null ? -1 : (this.groupIds.get(group) ?? -2);
    if (wanted === -2 || k <= 0 || this.slotOf.size === 0) return [];
    const offset = this.kernel?.offset ?? 0;
    const queryScale = quantize(query, this.query8, 0, this.kernel?.queryMax ?? 127, offset);
    const slack = this.querySlack(query, queryScale, offset);
    const n = this.used;
    const seqs = this.seqs;
    // A project's search scans that project's rows only (its member list).
    let members: Int32Array | null = null;
    if (wanted >= 0) {
      if (this.membersStale) this.rebuildMembers();
      const count = this.memberCount[wanted] ?? 0;
      if (count === 0) return [];
      members = this.members[wanted].subarray(0, count);
    }
    // The best `keep` by int8 score, kept in a small min-heap over slots.
    const keep = Math.max(VECTOR_RESCORE_MIN, k * VECTOR_RESCORE_FACTOR);
    this.dotAll(members);
    const heapSlot = new Int32Array(keep);
    const heapScore = new Float64Array(keep);
    const heapSeq = new Int32Array(keep);
    let size = 0;
    const dots = this.dots;
    const scales = this.scales;
    const sums = this.sums;
    // Two plain loops (not one with per-row branches on `members`): this is the hot path after the kernel.
    if (members) {
      for (let i = 0; i < members.length; i++) {
        const s = members[i];
        const seq = seqs[s];
        if (seq === 0) continue;
        const score = (dots[i] - offset * sums[s]) * scales[s];
        if (size < keep) heapPush(heapSlot, heapScore, heapSeq, size++, s, score, seq);
        else if (score > heapScore[0] || (score === heapScore[0] && seq < heapSeq[0])) heapReplaceTop(heapSlot, heapScore, heapSeq, size, s, score, seq);
      }
    } else {
      let bar = -Infinity;
      for (let s = 0; s < n; s++) {
        const score = (dots[s] - offset * sums[s]) * scales[s];
        if (score < bar) continue;
        const seq = seqs[s];
        if (seq === 0) continue;
        if (size < keep) {
          heapPush(heapSlot, heapScore, heapSeq, size++, s, score, seq);
          if (size === keep) bar = heapScore[0];
        } else if (score > bar || seq < heapSeq[0]) {
          heapReplaceTop(heapSlot, heapScore, heapSeq, size, s, score, seq);
          bar = heapScore[0];
        }
      }
    }
    const hits: VectorHit[] = [];
    for (let j = 0; j < size; j++) hits.push(this.rescore(heapSlot[j], query));
    this.stats.scanned += members ? members.length : n;
    this.stats.rescored += size;
    this.stats.searches++;
    hits.sort(byRank);
    // Every row outside the heap has an int8 score of at most the heap's worst: done when even that
    // plus the largest error bound stays below the k-th similarity found (nothing left can reach it).
    if (size === keep && hits.length >= k) {
      const kth = hits[k - 1].similarity;
      const l1 = this.queryL1(query);
      if (heapScore[0] * queryScale + this.maxNorm * slack + l1 * HALF_STEP * this.maxScale >= kth) {
        this.stats.rescans++;
        this.rescoreRest(query, members, queryScale, slack, l1, kth, heapSlot, size, hits);
        hits.sort(byRank);
      }
    }
    return hits.slice(0, k);
  }

  /**
   * Work counters since the index was made (or since a caller reset them): searches, rows whose
   * int8 score was computed, rows rescored with their float vector, searches that went back to the
   * rows (the heap's rows could not prove the top k). The bench reports rows rescored per search.
   */
  stats = { searches: 0, scanned: 0, rescored: 0, rescans: 0 };

  /**
   * The int8 score's error from the query's rounding, per unit of row length:
   * the length of (query - queryScale * int8 query), plus a margin far above
   * the float64 rounding of the 384-term sums either way.
   */
  private querySlack(query: Float32Array, queryScale: number, offset: number): number {
    const q8 = this.query8;
    let err = 0;
    let len = 0;
    for (let i = 0; i < DIMENSIONS; i++) {
      const d = query[i] - queryScale * (q8[i] - offset);
      err += d * d;
      len += query[i] * query[i];
    }
    this.queryLength = Math.sqrt(len);
    return Math.sqrt(err) * (1 + 1e-6) + this.queryLength * 1e-9;
  }

  /** The query's Euclidean length, set by querySlack. */
  private queryLength = 0;

  /** The sum of |query| values, with a margin: times HALF_STEP x a row's scale, a bound on the row's rounding error. */
  private queryL1(query: Float32Array): number {
    let l1 = 0;
    for (let i = 0; i < DIMENSIONS; i++) l1 += Math.abs(query[i]);
    return l1 * (1 + 1e-6);
  }

  /** A row's similarity: its float vector (as stored) dotted with the float query. */
  private rescore(s: number, query: Float32Array): VectorHit {
    // Restored from the index file and not yet filled from vec0: read it now (and keep it).
    if (!this.hasFloat[s]) {
      const fetched = this.vectorSource?.(this.seqs[s]) ?? null;
      if (fetched) this.adoptFloat(this.seqs[s], fetched);
    }
    let dot = 0;
    if (this.hasFloat[s]) {
      // Straight from the row's block, not through a view of it: a view is an object per row rescored.
      const block = this.floatBlocks[(s / FLOAT_BLOCK_ROWS) | 0];
      const o = (s & (FLOAT_BLOCK_ROWS - 1)) * DIMENSIONS;
      for (let i = 0; i < DIMENSIONS; i++) dot += block[o + i] * query[i];
      return { seq: this.seqs[s], similarity: dot };
    }
    // No float anywhere (an index restored without a vector source): its int8 values stand in.
    const q8 = this.q8;
    const o = s * DIMENSIONS;
    for (let i = 0; i < DIMENSIONS; i++) dot += q8[o + i] * query[i];
    return { seq: this.seqs[s], similarity: dot * this.scales[s] };
  }

  /**
   * Rescores every live row (of `members`, if given) outside the heap whose
   * int8 score plus its own error bound reaches `kth`, into `hits`: the heap's
   * rows were not enough to prove the top k (near ties within the rounding
   * error). The int8 scores are still in `dots`.
   */
  private rescoreRest(
    query: Float32Array,
    members: Int32Array | null,
    queryScale: number,
    slack: number,
    l1: number,
    kth: number,
    heapSlot: Int32Array,
    size: number,
    hits: VectorHit[],
  ): void {
    const inHeap = new Set<number>();
    for (let j = 0; j < size; j++) inHeap.add(heapSlot[j]);
    const offset = this.kernel?.offset ?? 0;
    const { dots, scales, sums, norms, seqs, residuals } = this;
    const half = l1 * HALF_STEP;
    // Never 0: times a row's unknown residual (Infinity) that would be NaN and lose the row.
    const l2 = Math.max(this.queryLength * (1 + 1e-6), 1e-300);
    const count = members ? members.length : this.used;
    let rescored = 0;
    for (let i = 0; i < count; i++) {
      const s = members ? members[i] : i;
      if (seqs[s] === 0) continue;
      const scale = scales[s];
      const rowError = Math.min(half * scale, l2 * residuals[s]);
      const bound = (dots[i] - offset * sums[s]) * scale * queryScale + norms[s] * slack + rowError;
      if (bound >= kth && !inHeap.has(s)) {
        hits.push(this.rescore(s, query));
        rescored++;
      }
    }
    this.stats.rescored += rescored;
  }

  /** int8 dot products of the quantised query with every live row (or with `members` only, in order). */
  private dotAll(members: Int32Array | null): void {
    const outAt = this.outAt();
    if (this.kernel) {
      const scan = this.kernel.scan;
      if (members) {
        // The list goes into WebAssembly memory once; one call scans every row it names.
        const listAt = this.listAt();
        new Int32Array(this.memory.buffer, listAt, members.length).set(members);
        this.kernel.scanList(QUERY_AT, ROWS_AT, listAt, members.length, outAt);
      } else {
        scan(QUERY_AT, ROWS_AT, this.used, outAt);
      }
      return;
    }
    // No WebAssembly SIMD: the same products in JavaScript (~50 ms at 100k).
    const q = this.query8;
    const rows = this.q8;
    const n = members ? members.length : this.used;
    for (let i = 0; i < n; i++) {
      const o = (members ? members[i] : i) * DIMENSIONS;
      let d = 0;
      for (let j = 0; j < DIMENSIONS; j++) d += q[j] * rows[o + j];
      this.dots[i] = d;
    }
  }
}

/**
 * A stored value is within half a step (its row's scale) of its int8 value times the scale; the
 * scale is kept as float32, whose rounding moves that by under 127 x 2^-24 of a step: 0.5001 covers it.
 */
const HALF_STEP = 0.5001;

/** The documented order: higher similarity first, equal similarities by lowest seq. */
const byRank = (a: VectorHit, b: VectorHit) => b.similarity - a.similarity || a.seq - b.seq;
