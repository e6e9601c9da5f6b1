import { DIMENSIONS } from "../../../embed/types";
import { int8Kernel, KERNEL_DIMS, type Kernel } from "./int8-kernel";
import { int4Kernel, type CodeScanFn } from "./int4-kernel";
import { CODE_BYTES, CODE_DIMS, encode, encodeQuery } from "./projection";
import { ENCODE_WORK_BYTES, encodeKernel, type EncodeFn } from "./encode-kernel";
import { quantizeKernel, type QuantizeFn } from "./quantize-kernel";
import {
  VECTOR_CLUSTER_TAIL_MIN,
  VECTOR_CLUSTER_TAIL_SHARE,
  VECTOR_PREFILTER_ABOVE,
  VECTOR_PREFILTER_CANDIDATES,
  VECTOR_PREFILTER_PROJECT_ABOVE,
  VECTOR_PREFILTER_PROJECT_PER_KEPT,
  VECTOR_PREFILTER_PROJECT_RATIO,
  VECTOR_PREFILTER_PROJECT_SHARE,
  VECTOR_RESCORE_FACTOR,
  VECTOR_RESCORE_MIN,
} from "../../../core/tuning";
import { shuffle } from "../../../core/shuffle";

export interface IndexSnapshot {
  groupNames: string[];
  seqs: Int32Array;
  groups: Int32Array;
  scales: Float32Array;
  sums: Int32Array;
  /** Each row's prefilter code step (projection.ts encode); NaN: not encoded yet. */
  codeSteps: Float32Array;
  rows: Int8Array;
  /** CODE_BYTES a row: the 4-bit codes of a fixed random projection (projection.ts). */
  codes: Uint8Array;
}

export interface VectorHit {
  seq: number;
  /** Cosine similarity in [-1, 1] (int8 document times float query). */
  similarity: number;
}

/**
 * The row memory: the quantised query, the code encoder's (encode-kernel.ts)
 * transform scratch, its list of row addresses, codes and steps out (a batch
 * of ENCODE_BATCH rows), then the rows.
 */
const QUERY_AT = 0;
const ENCODE_AT = 1024;
const ENCODE_BATCH = 256;
const ENCODE_LIST_AT = ENCODE_AT + ENCODE_WORK_BYTES;
const ENCODE_CODES_AT = ENCODE_LIST_AT + ENCODE_BATCH * 4;
const ENCODE_STEPS_AT = ENCODE_CODES_AT + ENCODE_BATCH * CODE_BYTES;
/** A vector being stored (f32) for the quantizer (quantize-kernel.ts), and the sum of its int8 values (after the query). */
const STAGE_AT = ENCODE_STEPS_AT + ENCODE_BATCH * 8;
const STAGE_SUM_AT = QUERY_AT + DIMENSIONS;
const ROWS_AT = 32768;
if (STAGE_AT + DIMENSIONS * 4 > ROWS_AT) throw new Error("vector index: the encoder's batch does not fit before the rows");
const PAGE = 65536;
/** The code memory: the projected query, then the codes, then the code scan's output. */
const CODE_QUERY_AT = 0;
const CODES_AT = 1024;
/** Bins of the prefilter's score histogram: at 100k rows a bin near the cut holds tens of rows. */
const PREFILTER_BINS = 1024;
/** A project's prefilter scans across gaps of up to this many other rows rather than starting another kernel call. */
const PREFILTER_GAP = 32;

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
export class VectorIndex {
  private seqs = new Int32Array(1024);
  private groups = new Int32Array(1024);
  private scales = new Float32Array(1024);
  /** Sum of each row's int8 values: undoes the kernel's query offset. */
  private sums = new Int32Array(1024);
  private memory: WebAssembly.Memory;
  private kernelFn: Kernel | null | undefined;
  private q8!: Int8Array;
  private dots!: Int32Array;
  private query8!: Int8Array;
  /** The prefilter codes: a memory of their own (grown apart from the rows), scanned by the 4-bit kernel. */
  private codeMemory: WebAssembly.Memory;
  private codeKernelFn: CodeScanFn | null | undefined;
  private codes!: Uint8Array;
  private codeQuery!: Int8Array;
  private codeDots!: Int32Array;
  private codeSteps = new Float32Array(1024);
  /**
   * False while some live rows have no code yet (their step is NaN): rows
   * added during a background load are coded in batches (fillCodes, after
   * each load step); searches score uncoded rows exactly meanwhile.
   */
  private codesComplete = true;
  /** fillCodes resumes here. */
  private codeCursor = 0;
  private slotOf = new Map<number, number>();
  private groupIds = new Map<string, number>();
  /**
   * Each group's slots in ascending order (the order the full scan visits
   * them, so ties rank alike), kept as rows are added: a project-filtered
   * search scans its own rows and never the store. Removed rows stay listed
   * (their seq is 0) until compaction; a regroup or a compaction rebuilds
   * the lists at the next search.
   */
  private members: Int32Array[] = [];
  private memberCount: number[] = [];
  private membersStale = true;
  /**
   * Slots below this are ordered by group (cluster()), so a project's rows
   * lie in one run of memory: scattered rows cost ~3x as much to scan (a TLB
   * miss and no prefetch per 384-byte row).
   */
  private clusteredUpTo = 0;
  /** Rows a begun restore has still to make live: nothing moves rows meanwhile. */
  private restoring = 0;
  private used = 0;
  private dead = 0;
  /** Moves on every change to the rows, their codes, groups or slots: a copy taken in slices checks it did not (snapshotInSlices). */
  private changes = 0;
  /** Runs before every search: brings the index up to date with other processes' writes. */
  beforeSearch: (() => void) | null = null;
  /** While a background load runs, searches find nothing: callers fall back to BM25 rather than a partial list. */
  loading = false;
  /** The engine's count of stored memories (VectorMirror.memories); without one, the vectors held. */
  countMemories: (() => number) | null = null;

  get memories(): number {
    return this.countMemories?.() ?? this.size;
  }

  constructor(opts: { relaxedSimd?: boolean } = {}) {
    if (DIMENSIONS !== KERNEL_DIMS) throw new Error(`vector index kernel is built for ${KERNEL_DIMS} dimensions, not ${DIMENSIONS}`);
    this.memory = new WebAssembly.Memory({ initial: Math.ceil(this.bytesFor(this.seqs.length) / PAGE) });
    this.relaxedSimd = opts.relaxedSimd ?? true;
    this.codeMemory = new WebAssembly.Memory({ initial: Math.ceil(this.codeBytesFor(this.seqs.length) / PAGE) });
    this.views();
  }

  private relaxedSimd: boolean;

  /**
   * The int8 scan, compiled on first use: the server builds its index before
   * it listens, and compiling (~7 ms CPU, most of it generating the module's
   * bytes in a cold process) can wait for the load or the first search.
   */
  private get kernel(): Kernel | null {
    if (this.kernelFn === undefined) this.kernelFn = int8Kernel(this.memory, this.relaxedSimd);
    return this.kernelFn;
  }

  /** The 4-bit code scan, compiled on first use (none without the int8 kernel's SIMD). */
  private get codeKernel(): CodeScanFn | null {
    if (this.codeKernelFn === undefined) this.codeKernelFn = this.kernel ? (int4Kernel(this.codeMemory, CODE_DIMS, this.relaxedSimd)?.scan ?? null) : null;
    return this.codeKernelFn;
  }

  get size(): number {
    return this.slotOf.size;
  }

  /** Adds or replaces the vector of `seq`; `group` is the memory's project ("" for none). */
  upsert(seq: number, vector: Float32Array, group: string | null): void {
    this.changes++;
    let slot = this.slotOf.get(seq);
    // A begun restore owns the slots past `used`: a new row here would overwrite one of them. The
    // loader replays the change log once the restore is done, which brings this row in then.
    if (slot === undefined && this.restoring > 0) return;
    if (slot === undefined) {
      if (this.used === this.seqs.length) this.grow();
      slot = this.used++;
      this.seqs[slot] = seq;
      this.slotOf.set(seq, slot);
      this.groups[slot] = this.groupId(group);
      this.addMember(slot);
      const tail = this.used - this.clusteredUpTo;
      if (tail >= VECTOR_CLUSTER_TAIL_MIN && tail >= this.used * VECTOR_CLUSTER_TAIL_SHARE && !this.loading && this.restoring === 0) {
        // After the row is written (below), so the move takes it along.
        this.clusterAfterWrite = true;
      }
    } else {
      const id = this.groupId(group);
      if (this.groups[slot] !== id) this.membersStale = true;
      this.groups[slot] = id;
    }
    this.writeRow(slot, vector);
    if (this.loading) {
      // Coded in batches by fillCodes (the SIMD encoder, ~0.8 us a row against ~3.9 one at a time in JavaScript).
      this.codeSteps[slot] = NaN;
      if (this.codesComplete || slot < this.codeCursor) this.codeCursor = slot;
      this.codesComplete = false;
    } else this.encodeRow(slot);
    if (this.clusterAfterWrite) {
      this.clusterAfterWrite = false;
      this.cluster();
    }
  }

  /** The int8 row, its scale and its sum at `slot`. */
  private writeRow(slot: number, vector: Float32Array): void {
    const quantizer = this.quantizer();
    if (quantizer) {
      // The same integers, scale and sum as below, ~4x faster: loading the index from vec0 is mostly this.
      this.stage.set(vector);
      this.scales[slot] = quantizer(STAGE_AT, ROWS_AT + slot * DIMENSIONS, STAGE_SUM_AT);
      this.sums[slot] = this.stageSum[0];
    } else {
      this.scales[slot] = quantize(vector, this.q8, slot * DIMENSIONS, 127, 0);
      let sum = 0;
      for (let i = slot * DIMENSIONS, end = i + DIMENSIONS; i < end; i++) sum += this.q8[i];
      this.sums[slot] = sum;
    }
  }

  private clusterAfterWrite = false;
  private quantizerFn: QuantizeFn | null | undefined;
  private stage!: Float32Array;
  private stageSum!: Int32Array;

  /** The SIMD quantizer of stored vectors, built on first use, or null: quantize() in JavaScript. */
  private quantizer(): QuantizeFn | null {
    if (this.quantizerFn === undefined) this.quantizerFn = this.kernel ? quantizeKernel(this.memory) : null;
    return this.quantizerFn;
  }

  /** The code of a slot's row, from its int8 values (so every way a row arrives gives it the same code). */
  private encodeRow(slot: number): void {
    const o = slot * DIMENSIONS;
    this.codeSteps[slot] = encode(this.q8.subarray(o, o + DIMENSIONS), this.codes, slot * CODE_BYTES) * this.scales[slot];
  }

  /**
   * Codes up to `max` rows still without one; true while some remain. The
   * loader runs it after each step of a background load (and in slices for
   * rows replayed after a load from the index file); until it is done, a
   * search prefilters the rows below the cursor and scores every row above it
   * exactly (all of them while most are uncoded: exact, only slower).
   */
  fillCodes(max: number): boolean {
    if (this.codesComplete) return false;
    this.changes++;
    const encoder = this.encoder();
    let s = this.codeCursor;
    let batch = 0;
    for (let done = 0; s < this.used && done < max; s++) {
      if (this.seqs[s] !== 0 && Number.isNaN(this.codeSteps[s])) {
        if (!encoder) this.encodeRow(s);
        else {
          this.encodeSlots[batch++] = s;
          if (batch === ENCODE_BATCH) batch = this.encodeBatch(encoder, batch);
        }
        done++;
      }
    }
    if (encoder) this.encodeBatch(encoder, batch);
    this.codeCursor = s;
    if (s < this.used) return true;
    this.codesComplete = true;
    this.codeCursor = 0;
    return false;
  }

  private encoderFn: EncodeFn | null | undefined;
  private encodeSlots = new Int32Array(ENCODE_BATCH);

  /** The SIMD code encoder, built on first use (only rows loaded in bulk need it), or null: rows are coded in JavaScript. */
  private encoder(): EncodeFn | null {
    if (this.encoderFn === undefined) this.encoderFn = this.kernel ? encodeKernel(this.memory, ENCODE_AT) : null;
    return this.encoderFn;
  }

  /** Codes the `n` slots in encodeSlots with the SIMD encoder (the same codes as encodeRow); returns 0. */
  private encodeBatch(encoder: EncodeFn, n: number): number {
    if (n === 0) return 0;
    const slots = this.encodeSlots;
    const buffer = this.memory.buffer;
    const list = new Int32Array(buffer, ENCODE_LIST_AT, ENCODE_BATCH);
    for (let i = 0; i < n; i++) list[i] = ROWS_AT + slots[i] * DIMENSIONS;
    // Groups of eight: the last row is repeated to fill the last group.
    const padded = (n + 7) & ~7;
    list.fill(list[n - 1], n, padded);
    encoder(ENCODE_LIST_AT, padded, ENCODE_CODES_AT, ENCODE_STEPS_AT);
    const codes = new Uint8Array(buffer, ENCODE_CODES_AT, n * CODE_BYTES);
    const steps = new Float64Array(buffer, ENCODE_STEPS_AT, n);
    if (slots[n - 1] - slots[0] === n - 1) this.codes.set(codes, slots[0] * CODE_BYTES);
    else for (let i = 0; i < n; i++) this.codes.set(codes.subarray(i * CODE_BYTES, (i + 1) * CODE_BYTES), slots[i] * CODE_BYTES);
    for (let i = 0; i < n; i++) this.codeSteps[slots[i]] = steps[i] * this.scales[slots[i]];
    return 0;
  }

  /** Compiles the SIMD kernels now (each is otherwise compiled on first use): a background load does it in a turn of its own. */
  prepareKernels(): void {
    if (this.codeKernel) {
      this.quantizer();
      this.encoder();
    }
  }

  /** Which scan runs: relaxed or portable WebAssembly SIMD, or plain JavaScript. */
  get kernelKind(): string {
    return this.kernel?.kind ?? "javascript";
  }

  /**
   * Up to `n` distinct seqs of live rows (at most `upTo`), uniformly at
   * random: a sample for background statistics without reading the store
   * (a random row of a large SQLite table is a random page read, ~30 us).
   */
  sampleSeqs(n: number, upTo = Number.MAX_SAFE_INTEGER): number[] {
    const live = this.slotOf.size;
    if (n <= 0 || live === 0) return [];
    if (n * 2 >= live) {
      const all: number[] = [];
      for (let s = 0; s < this.used; s++) if (this.seqs[s] !== 0 && this.seqs[s] <= upTo) all.push(this.seqs[s]);
      return shuffle(all).slice(0, n);
    }
    const picked = new Set<number>();
    for (let tries = 0; picked.size < n && tries < 16 * n; tries++) {
      const seq = this.seqs[Math.floor(Math.random() * this.used)];
      if (seq !== 0 && seq <= upTo) picked.add(seq);
    }
    return [...picked];
  }

  /** Moves a memory to another project group without touching its vector. */
  regroup(seq: number, group: string | null): void {
    const slot = this.slotOf.get(seq);
    if (slot === undefined) return;
    this.changes++;
    const id = this.groupId(group);
    if (this.groups[slot] !== id) this.membersStale = true;
    this.groups[slot] = id;
  }

  has(seq: number): boolean {
    return this.slotOf.has(seq);
  }

  remove(seq: number): void {
    const slot = this.slotOf.get(seq);
    if (slot === undefined) return;
    this.changes++;
    this.slotOf.delete(seq);
    this.seqs[slot] = 0;
    this.dead++;
    if (this.dead > 1024 && this.dead > this.used / 4) this.compact();
  }

  /** The live rows, packed (for the index file): slot i of each array is one vector. */
  snapshot(): IndexSnapshot {
    const { snap, n } = this.beginSnapshot();
    this.copyRows(snap, 0, n);
    return snap;
  }

  /**
   * snapshot(), with the rows and their codes copied `rowsPerSlice` at a time
   * and `pause` awaited between slices: at 100k they are ~45 MB, and the copy
   * in one go held the event loop ~35 ms (tuning.ts INDEX_SNAPSHOT_SLICE_ROWS).
   * Null when the index changed meanwhile (a write, a sync with another
   * process, a load step), since the copy would mix two states, or when
   * `wanted` turned false.
   */
  async snapshotInSlices(rowsPerSlice: number, pause: () => Promise<void>, wanted: () => boolean = () => true): Promise<IndexSnapshot | null> {
    const { snap, n } = this.beginSnapshot();
    const at = this.changes;
    for (let from = 0; from < n; from += rowsPerSlice) {
      if (from > 0) {
        await pause();
        if (this.changes !== at || !wanted()) return null;
      }
      this.copyRows(snap, from, Math.min(n, from + rowsPerSlice));
    }
    return snap;
  }

  /** The snapshot's small arrays, and room for its rows and codes (filled by copyRows). */
  private beginSnapshot(): { snap: IndexSnapshot; n: number } {
    // Saved in group order: the next start restores a clustered index.
    if (this.clusteredUpTo < this.used || this.dead > 0) this.cluster();
    while (this.fillCodes(Infinity));
    const n = this.used;
    const names: string[] = [];
    for (const [name, id] of this.groupIds) names[id] = name;
    const snap: IndexSnapshot = {
      groupNames: names,
      seqs: this.seqs.slice(0, n),
      groups: this.groups.slice(0, n),
      scales: this.scales.slice(0, n),
      sums: this.sums.slice(0, n),
      codeSteps: this.codeSteps.slice(0, n),
      rows: new Int8Array(n * DIMENSIONS),
      codes: new Uint8Array(n * CODE_BYTES),
    };
    return { snap, n };
  }

  private copyRows(snap: IndexSnapshot, from: number, to: number): void {
    snap.rows.set(this.q8.subarray(from * DIMENSIONS, to * DIMENSIONS), from * DIMENSIONS);
    snap.codes.set(this.codes.subarray(from * CODE_BYTES, to * CODE_BYTES), from * CODE_BYTES);
  }

  /** Replaces the contents with a snapshot (of the same dimensions). */
  restore(snap: IndexSnapshot): void {
    const n = snap.seqs.length;
    const into = this.beginRestore(snap.groupNames, n);
    into.seqs.set(snap.seqs);
    into.groups.set(snap.groups);
    into.scales.set(snap.scales);
    into.sums.set(snap.sums);
    into.codeSteps.set(snap.codeSteps);
    into.rows.set(snap.rows);
    into.codes.set(snap.codes);
    this.finishRestore(0, n);
  }

  /**
   * Empties the index and makes room for `n` rows in one step; returns its
   * own storage for them, to be filled in place (the index file is read
   * straight into it, no copies) before finishRestore. Searches find
   * nothing meanwhile (`loading`).
   */
  beginRestore(groupNames: string[], n: number): IndexSnapshot {
    this.clear();
    this.changes++;
    this.restoring = n;
    if (this.seqs.length < n) this.grow(n);
    this.groupIds = new Map(groupNames.map((name, id) => [name, id]));
    return {
      groupNames,
      seqs: this.seqs.subarray(0, n),
      groups: this.groups.subarray(0, n),
      scales: this.scales.subarray(0, n),
      sums: this.sums.subarray(0, n),
      codeSteps: this.codeSteps.subarray(0, n),
      rows: this.q8.subarray(0, n * DIMENSIONS),
      codes: this.codes.subarray(0, n * CODE_BYTES),
    };
  }

  /**
   * Writes `vector` into slot `slot` of a begun restore (its seq and group
   * set there by the caller): the load from vec0 places each row where its
   * group's run has it, so the index is in group order without cluster()
   * (~110 ms at 100k in one go, at the moment the index became ready).
   * Coded later by fillCodes.
   */
  placeRow(slot: number, vector: Float32Array): void {
    this.changes++;
    this.writeRow(slot, vector);
    this.codeSteps[slot] = NaN;
  }

  /** Makes rows [from, to) of a begun restore live; called in slices so a large index never holds the event loop long. A slot whose seq is 0 (a placed row that never came) stays empty. */
  finishRestore(from: number, to: number): void {
    this.changes++;
    for (let i = from; i < to; i++) {
      if (this.seqs[i] === 0) {
        this.dead++;
        continue;
      }
      this.slotOf.set(this.seqs[i], i);
      // A file's rows carry their codes; any without one are coded by fillCodes.
      if (Number.isNaN(this.codeSteps[i]) && this.codesComplete) {
        this.codesComplete = false;
        this.codeCursor = i;
      }
    }
    this.used = to;
    this.membersStale = true;
    if (to >= this.restoring) {
      this.restoring = 0;
      // A file saved by snapshot() is already in group order.
      this.clusteredUpTo = this.inGroupOrder() ? to : 0;
    }
  }

  /** Drops everything (a full reload follows). */
  clear(): void {
    this.changes++;
    this.slotOf.clear();
    this.seqs.fill(0);
    this.used = 0;
    this.dead = 0;
    this.membersStale = true;
    this.clusteredUpTo = 0;
    this.restoring = 0;
    this.codesComplete = true;
    this.codeCursor = 0;
  }

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

  /** Rows, then the dot products (cap x i32), then a member list (cap x i32). */
  private bytesFor(cap: number): number {
    return ROWS_AT + cap * DIMENSIONS + cap * 8;
  }

  private outAt(): number {
    return ROWS_AT + this.seqs.length * DIMENSIONS;
  }

  private listAt(): number {
    return this.outAt() + this.seqs.length * 4;
  }

  /** Codes, then the code scan's output (cap x i32). */
  private codeBytesFor(cap: number): number {
    return CODES_AT + cap * CODE_BYTES + cap * 4;
  }

  private codeDotsAt(): number {
    return CODES_AT + this.seqs.length * CODE_BYTES;
  }

  private addMember(slot: number): void {
    if (this.membersStale) return;
    const g = this.groups[slot];
    const count = this.memberCount[g] ?? 0;
    let list = this.members[g];
    if (!list || count === list.length) {
      const grown = new Int32Array(Math.max(64, count * 2));
      if (list) grown.set(list);
      this.members[g] = list = grown;
    }
    // Slots are handed out in ascending order, so appending keeps the list sorted.
    list[count] = slot;
    this.memberCount[g] = count + 1;
  }

  /** One pass over the slots: every group's list, in slot order. */
  private rebuildMembers(): void {
    const groupCount = this.groupIds.size;
    const counts = new Array<number>(groupCount).fill(0);
    for (let s = 0; s < this.used; s++) if (this.seqs[s] !== 0) counts[this.groups[s]]++;
    this.members = counts.map((c) => new Int32Array(Math.max(64, c)));
    this.memberCount = new Array<number>(groupCount).fill(0);
    for (let s = 0; s < this.used; s++) {
      if (this.seqs[s] === 0) continue;
      const g = this.groups[s];
      this.members[g][this.memberCount[g]++] = s;
    }
    this.membersStale = false;
  }

  private views(): void {
    const cap = this.seqs.length;
    this.query8 = new Int8Array(this.memory.buffer, QUERY_AT, DIMENSIONS);
    this.stage = new Float32Array(this.memory.buffer, STAGE_AT, DIMENSIONS);
    this.stageSum = new Int32Array(this.memory.buffer, STAGE_SUM_AT, 1);
    this.q8 = new Int8Array(this.memory.buffer, ROWS_AT, cap * DIMENSIONS);
    this.dots = new Int32Array(this.memory.buffer, this.outAt(), cap);
    this.codeQuery = new Int8Array(this.codeMemory.buffer, CODE_QUERY_AT, CODE_DIMS);
    this.codes = new Uint8Array(this.codeMemory.buffer, CODES_AT, cap * CODE_BYTES);
    this.codeDots = new Int32Array(this.codeMemory.buffer, this.codeDotsAt(), cap);
  }

  private groupId(group: string | null): number {
    const key = group ?? "";
    let id = this.groupIds.get(key);
    if (id === undefined) {
      id = this.groupIds.size;
      this.groupIds.set(key, id);
    }
    return id;
  }

  /** Doubles the capacity until it holds at least `atLeast` rows (in one allocation). */
  private grow(atLeast = this.seqs.length + 1): void {
    let cap = this.seqs.length * 2;
    while (cap < atLeast) cap *= 2;
    const grown = <T extends Int32Array | Float32Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(cap);
      b.set(a);
      return b;
    };
    const need = Math.ceil(this.bytesFor(cap) / PAGE) - this.memory.buffer.byteLength / PAGE;
    if (need > 0) this.memory.grow(need);
    const codeNeed = Math.ceil(this.codeBytesFor(cap) / PAGE) - this.codeMemory.buffer.byteLength / PAGE;
    if (codeNeed > 0) this.codeMemory.grow(codeNeed);
    // Rows stay where they are; the dot-product scratch moves past the larger row area.
    this.seqs = grown(this.seqs);
    this.groups = grown(this.groups);
    this.scales = grown(this.scales);
    this.sums = grown(this.sums);
    this.codeSteps = grown(this.codeSteps);
    this.views();
  }

  /** True when each group's rows form one run (as cluster() leaves them). */
  private inGroupOrder(): boolean {
    const seen = new Set<number>();
    for (let s = 0; s < this.used; s++) {
      const g = this.groups[s];
      if (s > 0 && g === this.groups[s - 1]) continue;
      if (seen.has(g)) return false;
      seen.add(g);
    }
    return true;
  }

  /**
   * Reorders the live rows by group (stable: slot order within a group), in
   * place: one pass of moves along the permutation's cycles, one row of
   * scratch. ~40-47 ms CPU at 100k (load ~10), run when the unordered tail
   * grows past VECTOR_CLUSTER_TAIL_SHARE of the index.
   */
  private cluster(): void {
    this.changes++;
    if (this.dead > 0) this.compact();
    const n = this.used;
    const groupCount = this.groupIds.size;
    const start = new Int32Array(groupCount + 1);
    for (let s = 0; s < n; s++) start[this.groups[s] + 1]++;
    for (let g = 0; g < groupCount; g++) start[g + 1] += start[g];
    // from[i]: the slot whose row goes to slot i.
    const from = new Int32Array(n);
    for (let s = 0; s < n; s++) from[start[this.groups[s]]++] = s;
    const move = <T extends Int32Array | Float32Array>(a: T) => {
      const old = a.slice(0, n) as T;
      for (let i = 0; i < n; i++) a[i] = old[from[i]];
    };
    move(this.seqs);
    move(this.groups);
    move(this.scales);
    move(this.sums);
    move(this.codeSteps);
    const q8 = this.q8;
    const codes = this.codes;
    const done = new Uint8Array(n);
    const scratch = new Int8Array(DIMENSIONS);
    const codeScratch = new Uint8Array(CODE_BYTES);
    for (let p = 0; p < n; p++) {
      if (done[p]) continue;
      done[p] = 1;
      if (from[p] === p) continue;
      scratch.set(q8.subarray(p * DIMENSIONS, (p + 1) * DIMENSIONS));
      codeScratch.set(codes.subarray(p * CODE_BYTES, (p + 1) * CODE_BYTES));
      let at = p;
      for (;;) {
        const src = from[at];
        if (src === p) {
          q8.set(scratch, at * DIMENSIONS);
          codes.set(codeScratch, at * CODE_BYTES);
          break;
        }
        q8.copyWithin(at * DIMENSIONS, src * DIMENSIONS, (src + 1) * DIMENSIONS);
        codes.copyWithin(at * CODE_BYTES, src * CODE_BYTES, (src + 1) * CODE_BYTES);
        done[src] = 1;
        at = src;
      }
    }
    // Rows moved: a fill under way starts over (it skips coded rows).
    if (!this.codesComplete) this.codeCursor = 0;
    for (let s = 0; s < n; s++) this.slotOf.set(this.seqs[s], s);
    this.clusteredUpTo = n;
    this.membersStale = true;
  }

  private compact(): void {
    this.changes++;
    let to = 0;
    for (let from = 0; from < this.used; from++) {
      if (this.seqs[from] === 0) continue;
      if (to !== from) {
        this.seqs[to] = this.seqs[from];
        this.groups[to] = this.groups[from];
        this.scales[to] = this.scales[from];
        this.sums[to] = this.sums[from];
        this.codeSteps[to] = this.codeSteps[from];
        this.q8.copyWithin(to * DIMENSIONS, from * DIMENSIONS, (from + 1) * DIMENSIONS);
        this.codes.copyWithin(to * CODE_BYTES, from * CODE_BYTES, (from + 1) * CODE_BYTES);
      }
      this.slotOf.set(this.seqs[to], to);
      to++;
    }
    this.seqs.fill(0, to, this.used);
    this.used = to;
    this.dead = 0;
    this.membersStale = true;
    if (!this.codesComplete) this.codeCursor = 0;
  }
}

/** The first index of ascending `list` whose value is at least `x` (list.length if none). */
function lowerBound(list: Int32Array, x: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Writes `v` as integers in [-max, max] plus `offset` at `into[at..]`; returns the scale (float = int * scale). */
export function quantize(v: Float32Array, into: Int8Array, at: number, maxInt: number, offset: number): number {
  let max = 0;
  for (let i = 0; i < DIMENSIONS; i++) {
    const a = Math.abs(v[i]);
    if (a > max) max = a;
  }
  const scale = max > 0 ? max / maxInt : 1;
  const inv = 1 / scale;
  // Math.round(x) as floor plus a branch-free carry: the same integers (x - f
  // is exact for these magnitudes; NaN gives 0 both ways), and `| 0` keeps a
  // floor of -0 an int so the JIT stays on its integer path. In-process, 100k
  // vectors: 250 ms CPU against 330 ms (sparse hashed vectors) and 645 ms
  // (dense, model-like) with Math.round; loading the index is mostly this.
  for (let i = 0; i < DIMENSIONS; i++) {
    const x = v[i] * inv;
    const f = Math.floor(x) | 0;
    into[at + i] = f + +(x - f >= 0.5) + offset;
  }
  return scale;
}

/*
 * A min-heap of the best candidates, worst on top. "Worse" is a lower score,
 * or an equal score and a higher seq: which of two equal int8 scores is kept
 * must not depend on where the rows sit in memory (cluster() moves them).
 */
const worse = (scoreA: number, seqA: number, scoreB: number, seqB: number) => scoreA < scoreB || (scoreA === scoreB && seqA > seqB);

function heapPush(slots: Int32Array, scores: Float64Array, seqs: Int32Array, size: number, slot: number, score: number, seq: number): void {
  let i = size;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!worse(score, seq, scores[p], seqs[p])) break;
    slots[i] = slots[p];
    scores[i] = scores[p];
    seqs[i] = seqs[p];
    i = p;
  }
  slots[i] = slot;
  scores[i] = score;
  seqs[i] = seq;
}

function heapReplaceTop(slots: Int32Array, scores: Float64Array, seqs: Int32Array, size: number, slot: number, score: number, seq: number): void {
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= size) break;
    const r = l + 1;
    const c = r < size && worse(scores[r], seqs[r], scores[l], seqs[l]) ? r : l;
    if (!worse(scores[c], seqs[c], score, seq)) break;
    slots[i] = slots[c];
    scores[i] = scores[c];
    seqs[i] = seqs[c];
    i = c;
  }
  slots[i] = slot;
  scores[i] = score;
  seqs[i] = seq;
}
