import { DIMENSIONS } from "../embed/types";
import { VECTOR_COARSE_ABOVE, VECTOR_COARSE_FACTOR, VECTOR_EXACT_BELOW, VECTOR_PREFILTER_FACTOR, VECTOR_PREFILTER_MIN } from "./tuning";

const WORDS = DIMENSIONS / 32;
/** Words (of 32 bits) compared in the coarse first pass over a large store. */
const COARSE_WORDS = 4;
// 16-bit popcount table: two lookups per 32-bit word beat bit tricks in JS.
const POP16 = new Uint8Array(65536);
for (let i = 1; i < 65536; i++) POP16[i] = (i & 1) + POP16[i >> 1];

export interface VectorHit {
  seq: number;
  /** Cosine similarity in [-1, 1] (approximate: int8 rescoring). */
  similarity: number;
}

/**
 * In-memory mirror of the vec0 table, for the hot path. A brute-force vec0
 * KNN over 100k float vectors costs ~75 ms here; this keeps a sign-bit code
 * (48 bytes) and an int8 copy (384 bytes) per vector, prefilters by Hamming
 * distance and rescores the survivors, in a few milliseconds. vec0 stays the
 * durable truth; this is rebuilt from it at start and updated after commits.
 */
export class VectorIndex {
  private seqs = new Int32Array(1024);
  private groups = new Int32Array(1024);
  // Int32, not Uint32: a Uint32 element past 2^31 is a double to the JIT, which
  // made the Hamming loop several times slower depending on the data.
  private codes = new Int32Array(1024 * WORDS);
  private q8 = new Int8Array(1024 * DIMENSIONS);
  private scales = new Float32Array(1024);
  private slotOf = new Map<number, number>();
  private groupIds = new Map<string, number>();
  private used = 0;
  private dead = 0;

  get size(): number {
    return this.slotOf.size;
  }

  /** Adds or replaces the vector of `seq`; `group` is the memory's project ("" for none). */
  upsert(seq: number, vector: Float32Array, group: string | null): void {
    this.remove(seq);
    if (this.used === this.seqs.length) this.grow();
    const slot = this.used++;
    this.seqs[slot] = seq;
    this.groups[slot] = this.groupId(group);
    let max = 0;
    for (let i = 0; i < DIMENSIONS; i++) max = Math.max(max, Math.abs(vector[i]));
    const scale = max > 0 ? max / 127 : 1;
    this.scales[slot] = scale;
    const qo = slot * DIMENSIONS;
    const co = slot * WORDS;
    for (let w = 0; w < WORDS; w++) {
      let bits = 0;
      for (let b = 0; b < 32; b++) {
        const x = vector[w * 32 + b];
        this.q8[qo + w * 32 + b] = Math.round(x / scale);
        if (x > 0) bits |= 1 << b;
      }
      this.codes[co + w] = bits;
    }
    this.slotOf.set(seq, slot);
  }

  /** Moves a memory to another project group without touching its vector. */
  regroup(seq: number, group: string | null): void {
    const slot = this.slotOf.get(seq);
    if (slot !== undefined) this.groups[slot] = this.groupId(group);
  }

  remove(seq: number): void {
    const slot = this.slotOf.get(seq);
    if (slot === undefined) return;
    this.slotOf.delete(seq);
    this.seqs[slot] = 0;
    this.dead++;
    if (this.dead > 1024 && this.dead > this.used / 4) this.compact();
  }

  /** Top `k` by similarity, optionally within one group (project). */
  search(query: Float32Array, k: number, group?: string | null): VectorHit[] {
    const wanted = group === undefined || group === null ? -1 : (this.groupIds.get(group) ?? -2);
    if (wanted === -2 || k <= 0) return [];
    const live = this.used;
    let candidates: number[];
    if (this.slotOf.size <= VECTOR_EXACT_BELOW) {
      candidates = [];
      for (let s = 0; s < live; s++) if (this.seqs[s] !== 0 && (wanted < 0 || this.groups[s] === wanted)) candidates.push(s);
    } else {
      candidates = this.prefilter(query, Math.max(VECTOR_PREFILTER_MIN, k * VECTOR_PREFILTER_FACTOR), wanted);
    }
    const hits: VectorHit[] = [];
    for (const s of candidates) {
      const o = s * DIMENSIONS;
      let dot = 0;
      for (let i = 0; i < DIMENSIONS; i++) dot += this.q8[o + i] * query[i];
      hits.push({ seq: this.seqs[s], similarity: dot * this.scales[s] });
    }
    hits.sort((a, b) => b.similarity - a.similarity);
    return hits.slice(0, k);
  }

  private prefilter(query: Float32Array, keep: number, wanted: number): number[] {
    const q = new Int32Array(WORDS);
    for (let w = 0; w < WORDS; w++) {
      let bits = 0;
      for (let b = 0; b < 32; b++) if (query[w * 32 + b] > 0) bits |= 1 << b;
      q[w] = bits;
    }
    const n = this.used;
    // Large stores: a first pass on the first COARSE_WORDS words of each code
    // narrows the field, and only the survivors get the full 384-bit distance.
    const coarse = n > VECTOR_COARSE_ABOVE ? this.closest(q, 0, COARSE_WORDS, keep * VECTOR_COARSE_FACTOR, wanted, null) : null;
    return this.closest(q, 0, WORDS, keep, wanted, coarse);
  }

  /**
   * Slots whose Hamming distance over words [from, to) is smallest, at least
   * `keep` of them, taken from `among` (or every live slot of the group).
   */
  private closest(q: Int32Array, from: number, to: number, keep: number, wanted: number, among: number[] | null): number[] {
    const n = among ? among.length : this.used;
    const dist = new Uint16Array(n);
    const hist = new Uint32Array(DIMENSIONS + 2);
    const NONE = DIMENSIONS + 1;
    // The hot loop of a large store: locals instead of `this.` fields, int32 throughout.
    const codes = this.codes;
    const seqs = this.seqs;
    const groups = this.groups;
    for (let i = 0; i < n; i++) {
      const s = among ? among[i] : i;
      if (seqs[s] === 0 || (wanted >= 0 && groups[s] !== wanted)) {
        dist[i] = NONE;
        continue;
      }
      let d = 0;
      const o = s * WORDS;
      for (let w = from; w < to; w++) {
        const x = codes[o + w] ^ q[w];
        d += POP16[x & 0xffff] + POP16[x >>> 16];
      }
      dist[i] = d;
      hist[d]++;
    }
    // Smallest Hamming radius that keeps at least `keep` candidates.
    let cut = 0;
    let kept = 0;
    while (cut <= DIMENSIONS && kept < keep) kept += hist[cut++];
    const out: number[] = [];
    for (let i = 0; i < n; i++) if (dist[i] < cut) out.push(among ? among[i] : i);
    return out;
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

  private grow(): void {
    const cap = this.seqs.length * 2;
    const grown = <T extends Int32Array | Uint32Array | Int8Array | Float32Array>(a: T, per: number): T => {
      const b = new (a.constructor as new (n: number) => T)(cap * per);
      b.set(a);
      return b;
    };
    this.seqs = grown(this.seqs, 1);
    this.groups = grown(this.groups, 1);
    this.scales = grown(this.scales, 1);
    this.codes = grown(this.codes, WORDS);
    this.q8 = grown(this.q8, DIMENSIONS);
  }

  private compact(): void {
    let to = 0;
    for (let from = 0; from < this.used; from++) {
      if (this.seqs[from] === 0) continue;
      if (to !== from) {
        this.seqs[to] = this.seqs[from];
        this.groups[to] = this.groups[from];
        this.scales[to] = this.scales[from];
        this.codes.copyWithin(to * WORDS, from * WORDS, (from + 1) * WORDS);
        this.q8.copyWithin(to * DIMENSIONS, from * DIMENSIONS, (from + 1) * DIMENSIONS);
      }
      this.slotOf.set(this.seqs[to], to);
      to++;
    }
    this.used = to;
    this.dead = 0;
  }
}
