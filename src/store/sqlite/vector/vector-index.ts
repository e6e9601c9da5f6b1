import { DIMENSIONS } from "../../../embed/types";
import { VECTOR_RESCORE_FACTOR, VECTOR_RESCORE_MIN, VECTOR_TILE_ROWS } from "./tuning";
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
    return this.searchOne(query, k, group, -Infinity);
  }

  /**
   * search() for several queries (one catch-up with the store for all), each
   * hit at least `minSimilarity`: for each query, its top `k` with what is
   * below `minSimilarity` left out, exactly what search() returns filtered.
   * Rows whose int8 score cannot reach `minSimilarity` (score plus the largest
   * error bound below it) never enter the heap nor get rescored (an import's
   * near-duplicate and link thresholds are far above most similarities).
   * Queries of one group are scanned together, VECTOR_TILE_ROWS rows at a
   * time: each tile is read from memory once for all of them and stays in
   * the CPU's cache (a project of 40k rows is 15 MB; one scan each read it
   * from memory at about twice the time a row). The same heap steps per query
   * in the same row order as search(): the same hits.
   */
  searchMany(queries: readonly { vector: Float32Array; k: number; group: string | null }[], minSimilarity: number): VectorHit[][] {
    const out: VectorHit[][] = queries.map(() => []);
    if (this.loading) return out;
    this.beforeSearch?.();
    const byGroup = new Map<number, number[]>();
    for (const [j, q] of queries.entries()) {
      const wanted = this.wantedOf(q.group);
      if (wanted === -2 || q.k <= 0 || this.slotOf.size === 0) continue;
      const list = byGroup.get(wanted);
      if (list) list.push(j);
      else byGroup.set(wanted, [j]);
    }
    for (const [wanted, js] of byGroup) {
      if (js.length === 1 || !this.kernel) {
        for (const j of js) out[j] = this.searchOne(queries[j].vector, queries[j].k, queries[j].group, minSimilarity);
        continue;
      }
      const members = this.membersOf(wanted);
      if (members?.length === 0) continue;
      const states = js.map((j) => this.startQuery(queries[j].vector, queries[j].k, minSimilarity));
      const n = members ? members.length : this.used;
      const kernel = this.kernel;
      const outAt = this.outAt();
      const listAt = this.listAt();
      if (members) new Int32Array(this.memory.buffer, listAt, members.length).set(members);
      for (let from = 0; from < n; from += VECTOR_TILE_ROWS) {
        const len = Math.min(VECTOR_TILE_ROWS, n - from);
        for (const st of states) {
          this.query8.set(st.q8);
          if (members) kernel.scanList(QUERY_AT, ROWS_AT, listAt + from * 4, len, outAt);
          else kernel.scan(QUERY_AT, ROWS_AT + from * DIMENSIONS, len, outAt);
          this.heapRows(st, members, from, len, from);
        }
      }
      js.forEach((j, i) => {
        out[j] = this.finishQuery(queries[j].vector, states[i], members, true);
      });
    }
    return out;
  }

  /** The group's id for a search: -1 every row, -2 a group the index has never seen. */
  private wantedOf(group: string | null | undefined): number {
    return group === undefined || group === null ? -1 : (this.groupIds.get(group) ?? -2);
  }

  /** A group's rows (its member list), null for every row. */
  private membersOf(wanted: number): Int32Array | null {
    if (wanted < 0) return null;
    if (this.membersStale) this.rebuildMembers();
    return this.members[wanted]?.subarray(0, this.memberCount[wanted] ?? 0) ?? new Int32Array(0);
  }

  private searchOne(query: Float32Array, k: number, group: string | null | undefined, minSimilarity: number): VectorHit[] {
    const wanted = this.wantedOf(group);
    if (wanted === -2 || k <= 0 || this.slotOf.size === 0) return [];
    // A project's search scans that project's rows only (its member list).
    const members = this.membersOf(wanted);
    if (members?.length === 0) return [];
    const st = this.startQuery(query, k, minSimilarity);
    this.dotAll(members);
    this.heapRows(st, members, 0, members ? members.length : this.used, 0);
    return this.finishQuery(query, st, members, false);
  }

  /** Quantizes the query (into query8, and a copy) and sets up its heap and bounds. */
  private startQuery(query: Float32Array, k: number, minSimilarity: number): QueryState {
    const offset = this.kernel?.offset ?? 0;
    const queryScale = quantize(query, this.query8, 0, this.kernel?.queryMax ?? 127, offset);
    const slack = this.querySlack(query, queryScale, offset);
    const l1 = this.queryL1(query);
    // The int8 score (before the query's scale) below which a row's similarity is surely under minSimilarity.
    const floor =
      minSimilarity === -Infinity || !(queryScale > 0)
        ? -Infinity
        : (minSimilarity - this.maxNorm * slack - l1 * HALF_STEP * this.maxScale) / queryScale - FLOOR_MARGIN;
    // The best `keep` by int8 score, kept in a small min-heap over slots.
    const keep = Math.max(VECTOR_RESCORE_MIN, k * VECTOR_RESCORE_FACTOR);
    return {
      k,
      minSimilarity,
      q8: this.query8.slice(),
      queryScale,
      slack,
      l1,
      queryLength: this.queryLength,
      keep,
      bar: floor,
      size: 0,
      heapSlot: new Int32Array(keep),
      heapScore: new Float64Array(keep),
      heapSeq: new Int32Array(keep),
    };
  }

  /**
   * Rows `from` .. `from + len` (of `members`, or every slot) into the query's heap; their int8
   * dot products are in `dots` from index `from - dotsFrom`.
   */
  private heapRows(st: QueryState, members: Int32Array | null, from: number, len: number, dotsFrom: number): void {
    const { keep, heapSlot, heapScore, heapSeq } = st;
    const offset = this.kernel?.offset ?? 0;
    const dots = this.dots;
    const scales = this.scales;
    const sums = this.sums;
    const seqs = this.seqs;
    const end = from + len;
    let size = st.size;
    let bar = st.bar;
    // Two plain loops (not one with per-row branches on `members`): this is the hot path after the kernel.
    // `bar` is the floor until the heap is full, then the heap's worst score.
    if (members) {
      for (let i = from; i < end; i++) {
        const s = members[i];
        const seq = seqs[s];
        if (seq === 0) continue;
        const score = (dots[i - dotsFrom] - offset * sums[s]) * scales[s];
        if (score < bar) continue;
        if (size < keep) {
          heapPush(heapSlot, heapScore, heapSeq, size++, s, score, seq);
          if (size === keep) bar = heapScore[0];
        } else if (score > bar || seq < heapSeq[0]) {
          heapReplaceTop(heapSlot, heapScore, heapSeq, size, s, score, seq);
          bar = heapScore[0];
        }
      }
    } else {
      for (let s = from; s < end; s++) {
        const score = (dots[s - dotsFrom] - offset * sums[s]) * scales[s];
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
    st.size = size;
    st.bar = bar;
  }

  /** Rescores the heap's rows, goes back to the rows if the bound says so, and cuts to k (and the threshold). */
  private finishQuery(query: Float32Array, st: QueryState, members: Int32Array | null, tiled: boolean): VectorHit[] {
    const { k, keep, size, heapSlot, heapScore, queryScale, slack, l1, minSimilarity } = st;
    const hits: VectorHit[] = [];
    for (let j = 0; j < size; j++) hits.push(this.rescore(heapSlot[j], query));
    this.stats.scanned += members ? members.length : this.used;
    this.stats.rescored += size;
    this.stats.searches++;
    hits.sort(byRank);
    // Every row outside the heap has an int8 score of at most the heap's worst: done when even that
    // plus the largest error bound stays below the k-th similarity found (nothing left can reach it)
    // or below minSimilarity. A heap not full holds every row above the floor.
    if (size === keep && hits.length >= k) {
      const kth = Math.max(hits[k - 1].similarity, minSimilarity);
      if (heapScore[0] * queryScale + this.maxNorm * slack + l1 * HALF_STEP * this.maxScale >= kth) {
        this.stats.rescans++;
        // A tiled scan kept only its last tile's products: this query's, all of them, again.
        this.query8.set(st.q8);
        this.queryLength = st.queryLength;
        if (tiled) this.dotAll(members);
        this.rescoreRest(query, members, queryScale, slack, l1, kth, heapSlot, size, hits);
        hits.sort(byRank);
      }
    }
    if (minSimilarity === -Infinity) return hits.slice(0, k);
    const above: VectorHit[] = [];
    for (const h of hits) {
      if (above.length === k || h.similarity < minSimilarity) break;
      above.push(h);
    }
    return above;
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

/** Taken off searchMany's int8 floor: far above the float64 rounding of the bound's few terms. */
const FLOOR_MARGIN = 1e-9;

/** One query of a search under way: its int8 copy and bounds, and its heap of the best int8 scores. */
interface QueryState {
  k: number;
  minSimilarity: number;
  q8: Int8Array;
  queryScale: number;
  slack: number;
  l1: number;
  queryLength: number;
  keep: number;
  /** The floor until the heap is full, then the heap's worst score. */
  bar: number;
  size: number;
  heapSlot: Int32Array;
  heapScore: Float64Array;
  heapSeq: Int32Array;
}

/** The documented order: higher similarity first, equal similarities by lowest seq. */
const byRank = (a: VectorHit, b: VectorHit) => b.similarity - a.similarity || a.seq - b.seq;
