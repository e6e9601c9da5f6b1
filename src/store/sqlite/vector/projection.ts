import { DIMENSIONS } from "../../../embed/types";
import { VECTOR_CODE_DIMS } from "./tuning";

/**
 * The vector index's prefilter code (vector-index.ts): a fixed random
 * projection of a vector to CODE_DIMS (VECTOR_CODE_DIMS, a multiple of 32)
 * values, each kept in 4 bits.
 *
 * The projection is a subsampled randomized Hadamard transform: fixed random
 * signs and a fixed permutation of the 384 inputs, a Walsh-Hadamard transform
 * of each block of 128, then CODE_DIMS of the 384 outputs (fixed, random,
 * as evenly from the three blocks as they divide). The dot product of two
 * projected vectors estimates their cosine whatever the vectors look like:
 * the offline embedder's sparse vectors (60-160 non-zero of 384) come out as
 * dense as a model's, so no dimension is wasted on zeros and 4 bits a value
 * lose little. Everything is drawn from a fixed seed: codes written by one
 * process (the index file) must match queries projected by another, so any
 * change here must change PROJECTION_ID (it is part of the file's format).
 */
export const CODE_DIMS = VECTOR_CODE_DIMS;
export const CODE_BYTES = CODE_DIMS / 2;
export const PROJECTION_ID = `srht-${CODE_DIMS}x4-1`;

const BLOCK = 128;
const BLOCKS = DIMENSIONS / BLOCK;

/** A small fixed-seed generator (LCG): the same sequence in every process and version. */
function lcg(seed: number): () => number {
  return () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
}

function shuffle(a: Int32Array, r: () => number): void {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    const t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

const random = lcg(0x5eed_4b17);
/** Input i goes to position into[i] with sign signs[i]. */
const signs = Float64Array.from({ length: DIMENSIONS }, () => (random() < 0.5 ? -1 : 1));
const into = Int32Array.from({ length: DIMENSIONS }, (_, i) => i);
shuffle(into, random);
/** The outputs kept (positions after the transform) and the weight of each: 1 / sqrt(kept from its block), so every block counts alike. */
const picked = new Int32Array(CODE_DIMS);
const weight = new Float64Array(CODE_DIMS);
{
  let k = 0;
  for (let b = 0; b < BLOCKS; b++) {
    const take = Math.floor(CODE_DIMS / BLOCKS) + (b < CODE_DIMS % BLOCKS ? 1 : 0);
    const rows = Int32Array.from({ length: BLOCK }, (_, i) => b * BLOCK + i);
    shuffle(rows, random);
    for (let i = 0; i < take; i++, k++) {
      picked[k] = rows[i];
      weight[k] = 1 / Math.sqrt(take);
    }
  }
}
/** The inverse of `into` with its sign: position p takes input from[p] times sign[p]. */
const from = new Int32Array(DIMENSIONS);
const signAt = new Float64Array(DIMENSIONS);
for (let i = 0; i < DIMENSIONS; i++) {
  from[into[i]] = i;
  signAt[into[i]] = signs[i];
}
const work = new Float64Array(DIMENSIONS);

/**
 * The projection's fixed tables, for encode-kernel.ts (the same transform in
 * WebAssembly SIMD, built from these so the two cannot drift apart): output
 * position p of the transform takes input `from[p]` times `sign[p]`, code
 * value k is output `picked[k]` times `weight[k]`.
 */
export const projectionTables = { block: BLOCK, from, sign: signAt, picked, weight } as const;

/** Projects `v` (DIMENSIONS values) into `out` (CODE_DIMS values); the maximum absolute value out. */
export function project(v: ArrayLike<number>, out: Float64Array): number {
  const w = work;
  // The permutation, the signs and the first two butterfly stages in one pass, four positions at a time
  // (short inner loops cost more than the arithmetic: 4.3 -> ~2 microseconds a vector).
  for (let p = 0; p < DIMENSIONS; p += 4) {
    const x0 = v[from[p]] * signAt[p];
    const x1 = v[from[p + 1]] * signAt[p + 1];
    const x2 = v[from[p + 2]] * signAt[p + 2];
    const x3 = v[from[p + 3]] * signAt[p + 3];
    const a0 = x0 + x1;
    const a1 = x0 - x1;
    const a2 = x2 + x3;
    const a3 = x2 - x3;
    w[p] = a0 + a2;
    w[p + 1] = a1 + a3;
    w[p + 2] = a0 - a2;
    w[p + 3] = a1 - a3;
  }
  for (let h = 4; h < BLOCK; h *= 2) {
    for (let i = 0; i < DIMENSIONS; i += 2 * h) {
      // Pairs never straddle a block: blocks are aligned powers of two.
      for (let j = i, end = i + h; j < end; j++) {
        const a = w[j];
        const b = w[j + h];
        w[j] = a + b;
        w[j + h] = a - b;
      }
    }
  }
  let max = 0;
  for (let k = 0; k < CODE_DIMS; k++) {
    const x = w[picked[k]] * weight[k];
    out[k] = x;
    const a = x < 0 ? -x : x;
    if (a > max) max = a;
  }
  return max;
}

const projected = new Float64Array(CODE_DIMS);

/**
 * Writes the 4-bit code of `v` at `into[at..at + CODE_BYTES)` in int4-kernel.ts's
 * layout and returns its step: value k of the code stands for
 * (nibble - 7.5) * step, nibble = floor(x / step) + 8 clamped to [0, 15].
 */
export function encode(v: ArrayLike<number>, into: Uint8Array, at: number): number {
  const max = project(v, projected);
  const step = max > 0 ? max / 8 : 1;
  const inv = 1 / step;
  for (let g = 0; g < CODE_DIMS; g += 32) {
    for (let j = 0; j < 16; j++) {
      let lo = Math.floor(projected[g + j] * inv) + 8;
      let hi = Math.floor(projected[g + 16 + j] * inv) + 8;
      lo = lo < 0 ? 0 : Math.min(lo, 15);
      hi = hi < 0 ? 0 : Math.min(hi, 15);
      into[at + (g >> 1) + j] = lo | (hi << 4);
    }
  }
  return step;
}
