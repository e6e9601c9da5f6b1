import { expect, test } from "bun:test";
import { VectorIndex } from "../../../../../src/store/sqlite/vector";
import { CODE_BYTES, projectionTables } from "../../../../../src/store/sqlite/vector/projection";

// The index's search is exact by construction (vector-index.ts): the top k by similarity (a row's
// int8 values times its scale, dotted with the float query), equal similarities by lowest seq.
// These stores are built to break a search that guesses: near duplicates, exact ties, one project
// with most rows, rows whose prefilter codes collide while their similarities differ.
const sqliteOnly = (name: string, fn: () => void | Promise<void>, timeout?: number) => test.skipIf(process.env.MEMSVC_TEST_ENGINE === "postgres")(`${name} [SQLite engine's in-memory index]`, fn, timeout);

const DIMS = 384;

function rng(seed: number) {
  return () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32 - 0.5;
  };
}
function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  return v.map((x) => x / n);
}
const unit = (r: () => number) => normalize(new Float32Array(DIMS).map(() => r()));
const near = (v: Float32Array, r: () => number, noise: number) => normalize(v.map((x) => x + r() * noise));
/** A sparse vector like the offline embedder's: ~80 non-zero of 384. */
const sparse = (r: () => number) => normalize(new Float32Array(DIMS).map(() => (r() > 0.29 ? r() + 0.5 : 0)));

/** The documented truth, from the index's own rows: every live row (of `group`) ranked, the first k. */
function exactTop(index: VectorIndex, query: Float32Array, k: number, group: string | null): { seq: number; similarity: number }[] {
  const snap = index.snapshot();
  const wanted = group === null ? -1 : snap.groupNames.indexOf(group);
  const all: { seq: number; similarity: number }[] = [];
  for (let s = 0; s < snap.seqs.length; s++) {
    if (snap.seqs[s] === 0 || (wanted >= 0 && snap.groups[s] !== wanted)) continue;
    let dot = 0;
    for (let i = 0, o = s * DIMS; i < DIMS; i++) dot += snap.rows[o + i] * query[i];
    all.push({ seq: snap.seqs[s], similarity: dot * snap.scales[s] });
  }
  all.sort((a, b) => b.similarity - a.similarity || a.seq - b.seq);
  return all.slice(0, k);
}

/** Counts the searches whose heap was not enough to prove the top k (the bound sent it back to the rows). */
function countRescans(index: VectorIndex): { used: number } {
  const seen = { used: 0 };
  const inner = (index as any).rescoreRest.bind(index);
  (index as any).rescoreRest = (...a: unknown[]) => {
    seen.used++;
    return inner(...a);
  };
  return seen;
}

function expectExact(index: VectorIndex, queries: Float32Array[], groups: (string | null)[], ks = [1, 3, 10, 60]): void {
  for (const [i, query] of queries.entries()) {
    for (const group of groups) {
      const k = ks[i % ks.length];
      expect({ i, group, k, hits: index.search(query, k, group) }).toEqual({ i, group, k, hits: exactTop(index, query, k, group) });
    }
  }
}

for (const relaxedSimd of [true, false]) {
  sqliteOnly(`near-duplicate clusters: the exact top k, unfiltered and by project (${relaxedSimd ? "relaxed" : "portable"} SIMD)`, () => {
    const r = rng(relaxedSimd ? 3 : 4);
    const index = new VectorIndex({ relaxedSimd });
    const centers: Float32Array[] = [];
    let seq = 0;
    // 600 clusters of 40 rows 0.001-0.01 apart: more near-equal rows than the heap keeps (40 for k 10).
    for (let c = 0; c < 600; c++) {
      const center = c % 2 ? unit(r) : sparse(r);
      centers.push(center);
      for (let m = 0; m < 40; m++) index.upsert(++seq, near(center, r, m < 20 ? 0.001 : 0.01), `p${c % 5}`);
    }
    const rescans = countRescans(index);
    const queries = Array.from({ length: 24 }, (_, q) => near(centers[q * 23], r, 0.002));
    expectExact(index, queries, [null, "p0", "p3"]);
    expect(rescans.used).toBeGreaterThan(0);
  }, 60_000);
}

sqliteOnly("many exact ties: the lowest seqs win, wherever the rows sit, after removals and a restore", () => {
  const r = rng(11);
  const index = new VectorIndex();
  const same = unit(r);
  const other = unit(r);
  // Equal rows added in descending seq order (slot order and seq order disagree), among 20k others.
  for (let seq = 30_000; seq > 27_000; seq--) index.upsert(seq, seq % 3 ? same : other, seq % 2 ? "a" : "b");
  for (let seq = 1; seq <= 20_000; seq++) index.upsert(seq, unit(r), seq % 2 ? "a" : "b");
  for (let seq = 27_001; seq <= 27_100; seq += 7) index.remove(seq);
  const rescans = countRescans(index);
  const queries = [same, other, near(same, r, 0.001), normalize(same.map((x, i) => x + other[i]))];
  expectExact(index, queries, [null, "a", "b"], [1, 10, 60, 3]);
  expect(rescans.used).toBeGreaterThan(0);
  const copy = new VectorIndex();
  copy.restore(index.snapshot());
  expectExact(copy, queries, [null, "a"], [10, 60, 3, 1]);
}, 60_000);

sqliteOnly("one project holding most rows: its search and a small project's are exact", () => {
  const r = rng(17);
  const index = new VectorIndex();
  const cores = Array.from({ length: 300 }, () => sparse(r));
  let seq = 0;
  for (let i = 0; i < 24_000; i++) {
    const core = cores[i % cores.length];
    // 95 % in "big"; the rest in "small" and "tiny", interleaved (rows in several runs).
    const group = i % 20 === 0 ? "small" : i % 97 === 0 ? "tiny" : "big";
    index.upsert(++seq, near(core, r, 0.3), group);
  }
  const queries = Array.from({ length: 20 }, (_, q) => near(cores[q * 13], r, 0.2));
  expectExact(index, queries, [null, "big", "small", "tiny"]);
}, 60_000);

/**
 * A vector whose transform (projection.ts) equals `base`'s at the positions the code keeps and is
 * random elsewhere: the same 4-bit code, a different similarity to almost any query.
 */
function sameCode(base: Float32Array, r: () => number, spread: number): Float32Array {
  const { block, from, sign, picked } = projectionTables;
  const kept = new Set(picked);
  const w = new Float64Array(DIMS);
  for (let p = 0; p < DIMS; p++) w[p] = base[from[p]] * sign[p];
  hadamard(w, block);
  for (let p = 0; p < DIMS; p++) if (!kept.has(p)) w[p] += r() * spread;
  // The block transform is its own inverse up to a factor of `block`.
  hadamard(w, block);
  const out = new Float32Array(DIMS);
  for (let p = 0; p < DIMS; p++) out[from[p]] = (w[p] / block) * sign[p];
  return out;
}
function hadamard(w: Float64Array, block: number): void {
  for (let h = 1; h < block; h *= 2) {
    for (let i = 0; i < DIMS; i += 2 * h) {
      if (i % block + h >= block) continue;
      for (let j = i; j < i + h; j++) {
        const a = w[j];
        const b = w[j + h];
        w[j] = a + b;
        w[j + h] = a - b;
      }
    }
  }
}

sqliteOnly("rows whose codes collide but whose similarities differ: the exact top k", () => {
  const r = rng(23);
  const index = new VectorIndex();
  const bases = Array.from({ length: 200 }, () => unit(r));
  // Queries are near a family's own members, so its rows fill the top 60 with differing similarities.
  let seq = 0;
  const family: number[] = [];
  for (const [b, base] of bases.entries()) {
    for (let m = 0; m < 60; m++) {
      index.upsert(++seq, sameCode(base, r, 1), b % 2 ? "x" : "y");
      if (b === 0) family.push(seq);
    }
  }
  for (let i = 0; i < 10_000; i++) index.upsert(++seq, unit(r), i % 2 ? "x" : "y");
  // The family's codes (from their int8 rows) nearly coincide, nibble by nibble: int8 rounding
  // moves a value across a step now and then. Their similarities to the queries do not.
  const snap = index.snapshot();
  const slotOf = new Map([...snap.seqs].map((s, i) => [s, i]));
  const codeOf = (seq: number) => snap.codes.subarray(slotOf.get(seq)! * CODE_BYTES, (slotOf.get(seq)! + 1) * CODE_BYTES);
  const first = codeOf(family[0]);
  let differ = 0;
  for (const seq of family.slice(1)) {
    const code = codeOf(seq);
    for (let b = 0; b < CODE_BYTES; b++) differ += +((code[b] & 15) !== (first[b] & 15)) + +((code[b] >> 4) !== (first[b] >> 4));
  }
  expect(differ / (family.length - 1)).toBeLessThan(16);
  const queries = [...Array.from({ length: 8 }, (_, q) => near(sameCode(bases[q], r, 1), r, 0.05)), ...Array.from({ length: 8 }, (_, q) => normalize(sameCode(bases[q], r, 1)))];
  const spread = exactTop(index, queries[0], 60, null).filter((h) => family.includes(h.seq)).map((h) => h.similarity);
  expect(Math.max(...spread) - Math.min(...spread)).toBeGreaterThan(0.05);
  expectExact(index, queries, [null, "x", "y"]);
}, 60_000);
