import { DIMENSIONS } from "../../../embed/types";
import { int8Kernel, KERNEL_DIMS, type Kernel } from "./int8-kernel";
import { int4Kernel, type CodeScanFn } from "./int4-kernel";
import { CODE_BYTES, CODE_DIMS, encode } from "./projection";
import { encodeKernel, type EncodeFn } from "./encode-kernel";
import { quantizeKernel, type QuantizeFn } from "./quantize-kernel";
import { VECTOR_CLUSTER_TAIL_MIN, VECTOR_CLUSTER_TAIL_SHARE } from "./tuning";
import {
  CODE_QUERY_AT,
  CODES_AT,
  ENCODE_AT,
  ENCODE_BATCH,
  ENCODE_CODES_AT,
  ENCODE_LIST_AT,
  ENCODE_STEPS_AT,
  PAGE,
  QUERY_AT,
  ROWS_AT,
  STAGE_AT,
  STAGE_SUM_AT,
} from "./layout";
import { quantize } from "./select";
import { groupPermutation, inGroupRuns, moveRowsAlongCycles, permuteInPlace, sampleLiveSeqs } from "./permute";

/** Rows a block of float vectors holds (rows.ts floatBlocks): 1.5 MB. */
const FLOAT_BLOCK_SHIFT = 10;
export const FLOAT_BLOCK_ROWS = 1 << FLOAT_BLOCK_SHIFT;

/**
 * The index's rows: int8 vectors and prefilter codes in WebAssembly memory,
 * their seqs, groups and slots, kept ordered by group (cluster) and compacted.
 * The snapshot (snapshot.ts) and the search (vector-index.ts) build on it.
 */
export class VectorRows {
  protected seqs = new Int32Array(1024);
  protected groups = new Int32Array(1024);
  protected scales = new Float32Array(1024);
  /** Sum of each row's int8 values: undoes the kernel's query offset. */
  protected sums = new Int32Array(1024);
  /**
   * An upper bound on each row's Euclidean length as stored (scale times the
   * length of its int8 values), and on all of them (never lowered by a
   * removal): the search's error bound for an int8 score (vector-index.ts).
   * Derived from the rows, so not part of the index file.
   */
  protected norms = new Float32Array(1024);
  protected maxNorm = 0;
  /**
   * The float vectors as stored (vec0's values), DIMENSIONS a slot: the
   * search ranks by them (exact float similarity, issue 38). 1536 bytes a
   * row (~154 MB at 100k): a vec0 lookup costs ~0.5 ms a row, too slow for
   * the tens to hundreds of rows a search rescores. A row restored from the
   * index file has none until the loader fills it from vec0 (hasFloat 0);
   * meanwhile the search reads it through vectorSource. Kept in blocks of
   * FLOAT_BLOCK_ROWS rows, made when a row of theirs is first written: the
   * index grows without copying them (one array of the doubled capacity
   * meant a 300-400 MB copy at 200k), and no block is made for capacity
   * no row uses yet.
   */
  protected floatBlocks: Float32Array[] = [];
  protected hasFloat = new Uint8Array(1024);
  /**
   * An upper bound on each row's rounding error as stored: the length of
   * (float vector - scale x int8 row), Infinity while the float is unknown
   * (the search then bounds it by scale / 2 a value). With the largest scale
   * and residual of all rows (never lowered by a removal), the search's
   * bound on |float similarity - int8 similarity| (vector-index.ts).
   */
  protected residuals = new Float32Array(1024).fill(Infinity);
  protected maxResidual = 0;
  protected maxScale = 0;
  /** Where a row without its float vector reads it (the engine: a vec0 lookup); none: its int8 values stand in. */
  vectorSource: ((seq: number) => Float32Array | null) | null = null;
  protected memory: WebAssembly.Memory;
  protected kernelFn: Kernel | null | undefined;
  protected q8!: Int8Array;
  protected dots!: Int32Array;
  protected query8!: Int8Array;
  /** The prefilter codes: a memory of their own (grown apart from the rows), scanned by the 4-bit kernel. */
  protected codeMemory: WebAssembly.Memory;
  protected codeKernelFn: CodeScanFn | null | undefined;
  protected codes!: Uint8Array;
  protected codeQuery!: Int8Array;
  protected codeDots!: Int32Array;
  protected codeSteps = new Float32Array(1024);
  /**
   * False while some live rows have no code yet (their step is NaN): rows
   * added during a background load are coded in batches (fillCodes, after
   * each load step); searches score uncoded rows exactly meanwhile.
   */
  protected codesComplete = true;
  /** fillCodes resumes here. */
  protected codeCursor = 0;
  protected slotOf = new Map<number, number>();
  protected groupIds = new Map<string, number>();
  /**
   * Each group's slots in ascending order (the order the full scan visits
   * them, so ties rank alike), kept as rows are added: a project-filtered
   * search scans its own rows and never the store. Removed rows stay listed
   * (their seq is 0) until compaction; a regroup or a compaction rebuilds
   * the lists at the next search.
   */
  protected members: Int32Array[] = [];
  protected memberCount: number[] = [];
  protected membersStale = true;
  /**
   * Slots below this are ordered by group (cluster()), so a project's rows
   * lie in one run of memory: scattered rows cost ~3x as much to scan (a TLB
   * miss and no prefetch per 384-byte row).
   */
  protected clusteredUpTo = 0;
  /** Rows a begun restore has still to make live: nothing moves rows meanwhile. */
  protected restoring = 0;
  protected used = 0;
  protected dead = 0;
  /** Moves on every change to the rows, their codes, groups or slots: a copy taken in slices checks it did not (snapshotInSlices). */
  protected changes = 0;
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

  protected relaxedSimd: boolean;

  /**
   * The int8 scan, compiled on first use: the server builds its index before
   * it listens, and compiling (~7 ms CPU, most of it generating the module's
   * bytes in a cold process) can wait for the load or the first search.
   */
  protected get kernel(): Kernel | null {
    if (this.kernelFn === undefined) this.kernelFn = int8Kernel(this.memory, this.relaxedSimd);
    return this.kernelFn;
  }

  /** The 4-bit code scan, compiled on first use (none without the int8 kernel's SIMD). */
  protected get codeKernel(): CodeScanFn | null {
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
  protected writeRow(slot: number, vector: Float32Array): void {
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
    this.measureRow(slot);
    this.keepFloat(slot, vector);
  }

  /** Keeps `vector` as the float vector of `slot` (whose int8 row it was quantised into) and its residual's length. */
  protected keepFloat(slot: number, vector: Float32Array): void {
    const o = slot * DIMENSIONS;
    this.floatRow(slot).set(vector);
    this.hasFloat[slot] = 1;
    const q8 = this.q8;
    const scale = this.scales[slot];
    let sq = 0;
    for (let i = 0; i < DIMENSIONS; i++) {
      const d = vector[i] - q8[o + i] * scale;
      sq += d * d;
    }
    // float64 sums of float32 values: the margin covers their rounding many times over.
    const res = Math.fround(Math.sqrt(sq) * (1 + 1e-6) + 1e-12);
    this.residuals[slot] = res;
    if (res > this.maxResidual) this.maxResidual = res;
  }

  /**
   * Gives the row of `seq` its float vector from outside (the loader's fill
   * from vec0 after a load from the index file), if it has none yet and
   * `vector` is the one its int8 row was made from (every value within half
   * a step of it): a vector written since, not yet replayed into the index,
   * is left for the change log's upsert. True when kept.
   */
  adoptFloat(seq: number, vector: Float32Array): boolean {
    const slot = this.slotOf.get(seq);
    if (slot === undefined || this.hasFloat[slot]) return false;
    if (!this.roundsTo(slot, vector)) return false;
    this.keepFloat(slot, vector);
    return true;
  }

  /** True when `vector` rounds to the int8 row of `slot` (each value within half a step, with a margin for float32 scales). */
  protected roundsTo(slot: number, vector: Float32Array): boolean {
    const o = slot * DIMENSIONS;
    const scale = this.scales[slot];
    const q8 = this.q8;
    const tolerance = scale * 0.5001 + 1e-30;
    for (let i = 0; i < DIMENSIONS; i++) if (Math.abs(vector[i] - q8[o + i] * scale) > tolerance) return false;
    return true;
  }

  /** The float vector kept for `seq` (a copy), or null: not held, or not yet filled after a load from the index file. */
  vectorOf(seq: number): Float32Array | null {
    const slot = this.slotOf.get(seq);
    if (slot === undefined || !this.hasFloat[slot]) return null;
    return this.floatRow(slot).slice();
  }

  /** The float row of `slot` (a view; its block is made on first use). */
  protected floatRow(slot: number): Float32Array {
    const b = slot >> FLOAT_BLOCK_SHIFT;
    const block = this.floatBlocks[b] ?? (this.floatBlocks[b] = new Float32Array(FLOAT_BLOCK_ROWS * DIMENSIONS));
    const o = (slot & (FLOAT_BLOCK_ROWS - 1)) * DIMENSIONS;
    return block.subarray(o, o + DIMENSIONS);
  }

  /** Rows without their float vector (after a load from the index file, until filled from vec0). */
  get floatsMissing(): number {
    let n = 0;
    for (let s = 0; s < this.used; s++) if (this.seqs[s] !== 0 && !this.hasFloat[s]) n++;
    return n;
  }

  /** Sets norms[slot] from the row's int8 values, rounded up (a bound must not shrink in float32). */
  protected measureRow(slot: number): void {
    const q8 = this.q8;
    let sq = 0;
    for (let i = slot * DIMENSIONS, end = i + DIMENSIONS; i < end; i++) sq += q8[i] * q8[i];
    // sq is an exact integer; the square root and the product round by far less than this margin.
    const norm = Math.fround(Math.sqrt(sq) * this.scales[slot] * (1 + 1e-6));
    this.norms[slot] = norm;
    if (norm > this.maxNorm) this.maxNorm = norm;
    if (this.scales[slot] > this.maxScale) this.maxScale = this.scales[slot];
  }

  protected clusterAfterWrite = false;
  protected quantizerFn: QuantizeFn | null | undefined;
  protected stage!: Float32Array;
  protected stageSum!: Int32Array;

  /** The SIMD quantizer of stored vectors, built on first use, or null: quantize() in JavaScript. */
  protected quantizer(): QuantizeFn | null {
    if (this.quantizerFn === undefined) this.quantizerFn = this.kernel ? quantizeKernel(this.memory) : null;
    return this.quantizerFn;
  }

  /** The code of a slot's row, from its int8 values (so every way a row arrives gives it the same code). */
  protected encodeRow(slot: number): void {
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

  protected encoderFn: EncodeFn | null | undefined;
  protected encodeSlots = new Int32Array(ENCODE_BATCH);

  /** The SIMD code encoder, built on first use (only rows loaded in bulk need it), or null: rows are coded in JavaScript. */
  protected encoder(): EncodeFn | null {
    if (this.encoderFn === undefined) this.encoderFn = this.kernel ? encodeKernel(this.memory, ENCODE_AT) : null;
    return this.encoderFn;
  }

  /** Codes the `n` slots in encodeSlots with the SIMD encoder (the same codes as encodeRow); returns 0. */
  protected encodeBatch(encoder: EncodeFn, n: number): number {
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
    return sampleLiveSeqs(this.seqs, this.used, this.slotOf.size, n, upTo);
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

  /** Drops everything (a full reload follows). */
  clear(): void {
    this.changes++;
    this.slotOf.clear();
    this.seqs.fill(0);
    this.used = 0;
    this.dead = 0;
    this.maxNorm = 0;
    this.maxScale = 0;
    this.maxResidual = 0;
    this.hasFloat.fill(0);
    this.residuals.fill(Infinity);
    this.floatBlocks = [];
    this.membersStale = true;
    this.clusteredUpTo = 0;
    this.restoring = 0;
    this.codesComplete = true;
    this.codeCursor = 0;
  }

  /** Rows, then the dot products (cap x i32), then a member list (cap x i32). */
  protected bytesFor(cap: number): number {
    return ROWS_AT + cap * DIMENSIONS + cap * 8;
  }

  protected outAt(): number {
    return ROWS_AT + this.seqs.length * DIMENSIONS;
  }

  protected listAt(): number {
    return this.outAt() + this.seqs.length * 4;
  }

  /** Codes, then the code scan's output (cap x i32). */
  protected codeBytesFor(cap: number): number {
    return CODES_AT + cap * CODE_BYTES + cap * 4;
  }

  protected codeDotsAt(): number {
    return CODES_AT + this.seqs.length * CODE_BYTES;
  }

  protected addMember(slot: number): void {
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
  protected rebuildMembers(): void {
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

  protected views(): void {
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

  protected groupId(group: string | null): number {
    const key = group ?? "";
    let id = this.groupIds.get(key);
    if (id === undefined) {
      id = this.groupIds.size;
      this.groupIds.set(key, id);
    }
    return id;
  }

  /** Doubles the capacity until it holds at least `atLeast` rows (in one allocation). */
  protected grow(atLeast = this.seqs.length + 1): void {
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
    this.norms = grown(this.norms);
    this.codeSteps = grown(this.codeSteps);
    const residuals = new Float32Array(cap).fill(Infinity);
    residuals.set(this.residuals);
    this.residuals = residuals;
    const hasFloat = new Uint8Array(cap);
    hasFloat.set(this.hasFloat);
    this.hasFloat = hasFloat;
    this.views();
  }

  /** True when each group's rows form one run (as cluster() leaves them). */
  protected inGroupOrder(): boolean {
    return inGroupRuns(this.groups, this.used);
  }

  /**
   * Reorders the live rows by group (stable: slot order within a group), in
   * place: one pass of moves along the permutation's cycles, one row of
   * scratch. ~40-47 ms CPU at 100k (load ~10), run when the unordered tail
   * grows past VECTOR_CLUSTER_TAIL_SHARE of the index.
   */
  protected cluster(): void {
    this.changes++;
    if (this.dead > 0) this.compact();
    const n = this.used;
    const from = groupPermutation(this.groups, n, this.groupIds.size);
    const move = (a: Int32Array | Float32Array | Uint8Array) => permuteInPlace(a, from);
    move(this.seqs);
    move(this.groups);
    move(this.scales);
    move(this.sums);
    move(this.norms);
    move(this.codeSteps);
    move(this.residuals);
    move(this.hasFloat);
    moveRowsAlongCycles(from, this.q8, this.codes, (slot) => this.floatRow(slot));
    // Rows moved: a fill under way starts over (it skips coded rows).
    if (!this.codesComplete) this.codeCursor = 0;
    for (let s = 0; s < n; s++) this.slotOf.set(this.seqs[s], s);
    this.clusteredUpTo = n;
    this.membersStale = true;
  }

  protected compact(): void {
    this.changes++;
    let to = 0;
    for (let from = 0; from < this.used; from++) {
      if (this.seqs[from] === 0) continue;
      if (to !== from) {
        this.seqs[to] = this.seqs[from];
        this.groups[to] = this.groups[from];
        this.scales[to] = this.scales[from];
        this.sums[to] = this.sums[from];
        this.norms[to] = this.norms[from];
        this.codeSteps[to] = this.codeSteps[from];
        this.residuals[to] = this.residuals[from];
        this.hasFloat[to] = this.hasFloat[from];
        this.floatRow(to).set(this.floatRow(from));
        this.q8.copyWithin(to * DIMENSIONS, from * DIMENSIONS, (from + 1) * DIMENSIONS);
        this.codes.copyWithin(to * CODE_BYTES, from * CODE_BYTES, (from + 1) * CODE_BYTES);
      }
      this.slotOf.set(this.seqs[to], to);
      to++;
    }
    this.seqs.fill(0, to, this.used);
    this.hasFloat.fill(0, to, this.used);
    this.residuals.fill(Infinity, to, this.used);
    this.used = to;
    this.dead = 0;
    this.membersStale = true;
    if (!this.codesComplete) this.codeCursor = 0;
  }
}
