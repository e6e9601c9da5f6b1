import { DIMENSIONS } from "../../../embed/types";
import { CODE_BYTES, encodeQuery } from "./projection";
import {
  VECTOR_PREFILTER_ABOVE,
  VECTOR_PREFILTER_CANDIDATES,
  VECTOR_PREFILTER_PROJECT_ABOVE,
  VECTOR_PREFILTER_PROJECT_PER_KEPT,
  VECTOR_PREFILTER_PROJECT_RATIO,
  VECTOR_PREFILTER_PROJECT_SHARE,
  VECTOR_RESCORE_FACTOR,
  VECTOR_RESCORE_MIN,
} from "./tuning";
import { CODE_QUERY_AT, CODES_AT, PREFILTER_BINS, PREFILTER_GAP, QUERY_AT, ROWS_AT } from "./layout";
import { heapPush, heapReplaceTop, lowerBound, quantize, worse } from "./select";
import { VectorSnapshots } from "./snapshot";

export type { IndexSnapshot } from "./snapshot";
export { quantize } from "./select";

export interface VectorHit {
  seq: number;
  /** Cosine similarity in [-1, 1] (int8 document times float query). */
  similarity: number;
}

/**
 * In-memory mirror of the vec0 table, for the hot path. A vec0 KNN over 100k
 * float vectors costs ~50-75 ms here; this keeps an int8 copy (384 bytes) of
 * each vector in WebAssembly memory and scores rows with an int8 SIMD kernel
 * (exact int8 dot products), then rescores the best with the float query.
 * Reading all 38 MB of int8 rows costs ~6 ms at 100k on a machine whose
 * memory delivers ~6 GB/s to one core, so a search over more than
 * VECTOR_PREFILTER_ABOVE rows first scans a 64-byte code per row (4-bit
 * values of a fixed random projection to 128 dimensions, projection.ts,
 * int4-kernel.ts) and scores only the VECTOR_PREFILTER_CANDIDATES best of
 * those exactly. vec0 stays the durable truth.
 */
export class VectorIndex extends VectorSnapshots {
  /** Top `k` by similarity, optionally within one group (project). */
  search(query: Float32Array, k: number, group?: string | null): VectorHit[] {
    if (this.loading) return [];
    this.beforeSearch?.();
    const wanted = group === undefined || group === null ? -1 : (this.groupIds.get(group) ?? -2);
    if (wanted === -2 || k <= 0 || this.slotOf.size === 0) return [];
    const offset = this.kernel?.offset ?? 0;
    quantize(query, this.query8, 0, this.kernel?.queryMax ?? 127, offset);
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
    // A large search (of every row, or of a large project's) scores exactly only the prefilter's candidates.
    members = this.prefilter(query, keep, members) ?? members;
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
    // Rescore with the float query: the int8 query rounding costs rank order among near ties.
    const hits: VectorHit[] = [];
    const q8 = this.q8;
    for (let j = 0; j < size; j++) {
      const s = heapSlot[j];
      const o = s * DIMENSIONS;
      let dot = 0;
      for (let i = 0; i < DIMENSIONS; i++) dot += q8[o + i] * query[i];
      hits.push({ seq: seqs[s], similarity: dot * scales[s] });
    }
    hits.sort((a, b) => b.similarity - a.similarity || a.seq - b.seq);
    return hits.slice(0, k);
  }

  /** The prefilter's scratch: rows above its floor (slot and score), and the histogram of their scores. */
  private aboveSlot = new Int32Array(0);
  private aboveScore = new Float32Array(0);
  private codeHistogram = new Int32Array(PREFILTER_BINS);

  /**
   * The slots of at least VECTOR_PREFILTER_CANDIDATES rows (8 per row kept,
   * if more) with the best score by the 4-bit code of the projection, in slot
   * order; with `members`, of that project's rows (its own cut, tuning.ts);
   * null when the scan of every int8 row (or member) is the way: few rows,
   * codes still being filled, no WebAssembly SIMD.
   *
   * The cut comes from a histogram, not a heap (a 2000-entry heap over 100k
   * rows cost ~1.5 ms, three flat passes ~0.8 ms, this ~0.3 ms): every eighth
   * row's score gives a floor, mean + 1.5 sd (~7 % of the rows lie above it if
   * scores were normal); one pass keeps the rows above it; the histogram of
   * those places the cut. Every row of the cut's bin is kept (up to twice the
   * number wanted, else a heap cuts with the tie rule below), so equal code
   * scores are never split, wherever the rows sit in memory. Too few rows
   * above the floor: the pass runs again with no floor.
   */
  private prefilter(query: Float32Array, keep: number, members: Int32Array | null): Int32Array | null {
    const live = members ? members.length : this.slotOf.size;
    // A project's cut keeps the same share of its rows as the whole index's (2,000 of 100k), and at least 32 per row kept (tuning.ts).
    const want = members ? Math.max(Math.ceil(live * VECTOR_PREFILTER_PROJECT_SHARE), keep * VECTOR_PREFILTER_PROJECT_PER_KEPT) : Math.max(VECTOR_PREFILTER_CANDIDATES, keep * 8);
    const from = members ? VECTOR_PREFILTER_PROJECT_ABOVE : VECTOR_PREFILTER_ABOVE;
    if (!this.codeKernel || live <= from || want * (members ? VECTOR_PREFILTER_PROJECT_RATIO : 2) > live) return null;
    // Every row below the fill's cursor has its code (fillCodes after a background load); the rest
    // join the candidates as they are, all of them, scored exactly. Mostly uncoded: the plain scan.
    const coded = this.codesComplete ? this.used : this.codeCursor;
    if (coded === this.used) return this.pick(query, want, members, coded);
    const split = members ? lowerBound(members, coded) : coded;
    const uncoded = members ? members.length - split : this.used - coded;
    if (uncoded * 2 > (members ? members.length : this.used) || split < want * 2) return null;
    const picked = this.pick(query, want, members ? members.subarray(0, split) : null, coded);
    const out = new Int32Array(picked.length + uncoded);
    out.set(picked);
    for (let i = 0; i < uncoded; i++) out[picked.length + i] = members ? members[split + i] : coded + i;
    return out;
  }

  /**
   * The prefilter's cut over coded rows: `members` (all coded), or every row
   * below `end`; at least `want` slots, in slot order.
   */
  private pick(query: Float32Array, want: number, members: Int32Array | null, end: number): Int32Array {
    const live = members ? members.length : end;
    const sum = encodeQuery(query, this.codeQuery);
    const n = this.used;
    const dotsAt = this.codeDotsAt();
    const scan = this.codeKernel!;
    if (!members) scan(CODE_QUERY_AT, CODES_AT, end, dotsAt);
    else {
      // One call per run of slots: a clustered project is one run, plus the rows written since, which
      // lie among other projects' (a short gap is scanned along: 64 bytes cost less than a call).
      for (let i = 0; i < live; ) {
        const first = members[i];
        let j = i + 1;
        while (j < live && members[j] - members[j - 1] <= PREFILTER_GAP) j++;
        scan(CODE_QUERY_AT, CODES_AT + first * CODE_BYTES, members[j - 1] - first + 1, dotsAt + first * 4);
        i = j;
      }
    }
    const dots = this.codeDots;
    const steps = this.codeSteps;
    const seqs = this.seqs;
    // Nibble v stands for (v - 7.5) * step: the 7.5 * sum(query) the kernel's dot leaves in is taken out here.
    const bias = 7.5 * sum;
    let sum1 = 0;
    let sum2 = 0;
    let sampled = 0;
    for (let i = 0; i < live; i += 8) {
      const s = members ? members[i] : i;
      if (seqs[s] === 0) continue;
      const score = (dots[s] - bias) * steps[s];
      sum1 += score;
      sum2 += score * score;
      sampled++;
    }
    const mean = sum1 / sampled;
    const floor = mean + 1.5 * Math.sqrt(Math.max(0, sum2 / sampled - mean * mean));
    if (this.aboveSlot.length < n) {
      this.aboveSlot = new Int32Array(this.seqs.length);
      this.aboveScore = new Float32Array(this.seqs.length);
    }
    let above = this.keepAbove(floor, bias, members, end);
    if (above < want) above = this.keepAbove(-Infinity, bias, members, end);
    const slots = this.aboveSlot;
    const scores = this.aboveScore;
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < above; i++) {
      const score = scores[i];
      if (score < min) min = score;
      if (score > max) max = score;
    }
    const hist = this.codeHistogram.fill(0);
    const top = PREFILTER_BINS - 1;
    const perBin = max > min ? top / (max - min) : 0;
    for (let i = 0; i < above; i++) hist[((scores[i] - min) * perBin) | 0]++;
    let cut = top;
    let taken = hist[top];
    while (taken < want && cut > 0) taken += hist[--cut];
    const out = new Int32Array(taken);
    let size = 0;
    for (let i = 0; i < above; i++) if ((((scores[i] - min) * perBin) | 0) >= cut) out[size++] = i;
    if (size <= want * 2) {
      for (let i = 0; i < size; i++) out[i] = slots[out[i]];
      return out;
    }
    // One bin held too many (scores piled up, e.g. many equal rows): the best `want`, equal scores by lowest seq.
    const heapSlot = new Int32Array(want);
    const heapScore = new Float64Array(want);
    const heapSeq = new Int32Array(want);
    let kept = 0;
    for (let j = 0; j < size; j++) {
      const i = out[j];
      const s = slots[i];
      if (kept < want) heapPush(heapSlot, heapScore, heapSeq, kept++, s, scores[i], seqs[s]);
      else if (worse(heapScore[0], heapSeq[0], scores[i], seqs[s])) heapReplaceTop(heapSlot, heapScore, heapSeq, kept, s, scores[i], seqs[s]);
    }
    return heapSlot.sort();
  }

  /** Keeps the live rows (of `members`, if given, else below `end`) whose code score is at least `floor` (in slot order) in aboveSlot / aboveScore; how many. */
  private keepAbove(floor: number, bias: number, members: Int32Array | null, end: number): number {
    const dots = this.codeDots;
    const steps = this.codeSteps;
    const seqs = this.seqs;
    const slots = this.aboveSlot;
    const scores = this.aboveScore;
    let above = 0;
    // Two plain loops, as in search(): the unfiltered one runs over every row.
    if (members) {
      for (let i = 0; i < members.length; i++) {
        const s = members[i];
        const score = (dots[s] - bias) * steps[s];
        if (score >= floor && seqs[s] !== 0) {
          slots[above] = s;
          scores[above++] = score;
        }
      }
      return above;
    }
    for (let s = 0; s < end; s++) {
      const score = (dots[s] - bias) * steps[s];
      if (score >= floor && seqs[s] !== 0) {
        slots[above] = s;
        scores[above++] = score;
      }
    }
    return above;
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
