import { DIMENSIONS } from "../../../embed/types";
import { CODE_BYTES } from "./projection";
import { shuffle } from "../../../core/shuffle";

/**
 * The stable order of `n` slots by group (a counting sort): from[i] is the
 * slot whose row goes to slot i, groups in id order, slot order within one.
 */
export function groupPermutation(groups: Int32Array, n: number, groupCount: number): Int32Array {
  const start = new Int32Array(groupCount + 1);
  for (let s = 0; s < n; s++) start[groups[s] + 1]++;
  for (let g = 0; g < groupCount; g++) start[g + 1] += start[g];
  const from = new Int32Array(n);
  for (let s = 0; s < n; s++) from[start[groups[s]]++] = s;
  return from;
}

/**
 * Moves the int8 rows, their codes and their float rows to where `from`
 * says, in place along the permutation's cycles with one row of scratch
 * each: no copy of the whole index.
 */
export function moveRowsAlongCycles(from: Int32Array, q8: Int8Array, codes: Uint8Array, floatRow: (slot: number) => Float32Array): void {
  const n = from.length;
  const done = new Uint8Array(n);
  const scratch = new Int8Array(DIMENSIONS);
  const codeScratch = new Uint8Array(CODE_BYTES);
  const floatScratch = new Float32Array(DIMENSIONS);
  for (let p = 0; p < n; p++) {
    if (done[p]) continue;
    done[p] = 1;
    if (from[p] === p) continue;
    scratch.set(q8.subarray(p * DIMENSIONS, (p + 1) * DIMENSIONS));
    codeScratch.set(codes.subarray(p * CODE_BYTES, (p + 1) * CODE_BYTES));
    floatScratch.set(floatRow(p));
    let at = p;
    for (;;) {
      const src = from[at];
      if (src === p) {
        q8.set(scratch, at * DIMENSIONS);
        codes.set(codeScratch, at * CODE_BYTES);
        floatRow(at).set(floatScratch);
        break;
      }
      q8.copyWithin(at * DIMENSIONS, src * DIMENSIONS, (src + 1) * DIMENSIONS);
      codes.copyWithin(at * CODE_BYTES, src * CODE_BYTES, (src + 1) * CODE_BYTES);
      floatRow(at).set(floatRow(src));
      done[src] = 1;
      at = src;
    }
  }
}

/** Puts a[from[i]] at a[i] for the first from.length slots. */
export function permuteInPlace(a: Int32Array | Float32Array | Uint8Array, from: Int32Array): void {
  const n = from.length;
  const old = a.slice(0, n);
  for (let i = 0; i < n; i++) a[i] = old[from[i]];
}

/** True when each group's rows form one run (as cluster() leaves them). */
export function inGroupRuns(groups: Int32Array, used: number): boolean {
  const seen = new Set<number>();
  for (let s = 0; s < used; s++) {
    const g = groups[s];
    if (s > 0 && g === groups[s - 1]) continue;
    if (seen.has(g)) return false;
    seen.add(g);
  }
  return true;
}

/**
 * Up to `n` distinct live seqs (non-zero, at most `upTo`) of the first `used`
 * slots, uniformly at random: the whole set shuffled when the sample is at
 * least half of it, else random slots until enough distinct ones are found.
 */
export function sampleLiveSeqs(seqs: Int32Array, used: number, live: number, n: number, upTo: number): number[] {
  if (n <= 0 || live === 0) return [];
  if (n * 2 >= live) {
    const all: number[] = [];
    for (let s = 0; s < used; s++) if (seqs[s] !== 0 && seqs[s] <= upTo) all.push(seqs[s]);
    return shuffle(all).slice(0, n);
  }
  const picked = new Set<number>();
  for (let tries = 0; picked.size < n && tries < 16 * n; tries++) {
    const seq = seqs[Math.floor(Math.random() * used)];
    if (seq !== 0 && seq <= upTo) picked.add(seq);
  }
  return [...picked];
}
