import { expect, test } from "bun:test";
import { VectorIndex } from "../../../../../src/store/sqlite/vector";
import { CODE_BYTES, projectionTables } from "../../../../../src/store/sqlite/vector/projection";

// The index's search is exact by construction (vector-index.ts): the top k by similarity (the float
// query dotted with the float vector as stored), equal similarities by lowest seq. These stores are
// built to break a search that guesses: near duplicates, exact ties, one project with most rows,
// rows whose prefilter codes collide while their similarities differ, rows whose int8 values are
// equal while their floats are not (the int8 order cannot tell them apart).
const sqliteOnly = (name: string, fn: () => void | Promise<void>, timeout?: number) =>
  test.skipIf(process.env.MEMSVC_TEST_ENGINE === "postgres")(`${name} [SQLite engine's in-memory index]`, fn, timeout);

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

/** What the test stored (as vec0 would hold it): the truth the index must match, and its vector source after a restore. */
class Stored {
  vectors = new Map<number, { v: Float32Array; group: string | null }>();
  constructor(public index: VectorIndex) {}
  upsert(seq: number, v: Float32Array, group: string | null): void {
    this.index.upsert(seq, v, group);
    this.vectors.set(seq, { v: v.slice(), group });
  }
  remove(seq: number): void {
    this.index.remove(seq);
    this.vectors.delete(seq);
  }
  source = (seq: number) => this.vectors.get(seq)?.v ?? null;
}

/** The documented truth: every stored vector (of `group`) dotted with the query in float64, ranked, the first k. */
function exactTop(stored: Stored, query: Float32Array, k: number, group: string | null): { seq: number; similarity: number }[] {
  const all: { seq: number; similarity: number }[] = [];
  for (const [seq, { v, group: g }] of stored.vectors) {
    if (group !== null && (g ?? "") !== group) continue;
    let dot = 0;
    for (let i = 0; i < DIMS; i++) dot += v[i] * query[i];
    all.push({ seq, similarity: dot });
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

/**
 * search() is the exact top k; searchMany() with a threshold is that top k without what is under it
 * (an import's batch), checked at thresholds on a hit's own similarity (ties at the bound), between
 * hits, and at fixed values, every query of a group in one call.
 */
function expectExact(
  stored: Stored,
  queries: Float32Array[],
  groups: (string | null)[],
  ks = [1, 3, 10, 60],
  index = stored.index,
  opts = { many: true },
): void {
  for (const group of groups) {
    const truth = queries.map((query, i) => exactTop(stored, query, ks[i % ks.length], group));
    for (const [i, query] of queries.entries()) {
      const k = ks[i % ks.length];
      expect({ i, group, k, hits: index.search(query, k, group) }).toEqual({ i, group, k, hits: truth[i] });
    }
    if (!opts.many) continue;
    const at = truth.flatMap((t) => (t.length ? [t[Math.floor(t.length / 2)].similarity, t[t.length - 1].similarity + 1e-7] : []));
    for (const threshold of [...at.slice(0, 6), 0.3, 0.45, 0.9]) {
      const many = index.searchMany(
        queries.map((vector, i) => ({ vector, k: ks[i % ks.length], group })),
        threshold,
      );
      expect({ group, threshold, many }).toEqual({ group, threshold, many: truth.map((t) => t.filter((h) => h.similarity >= threshold)) });
    }
  }
}

for (const relaxedSimd of [true, false]) {
  sqliteOnly(
    `near-duplicate clusters: the exact top k, unfiltered and by project (${relaxedSimd ? "relaxed" : "portable"} SIMD)`,
    () => {
      const r = rng(relaxedSimd ? 3 : 4);
      const stored = new Stored(new VectorIndex({ relaxedSimd }));
      const index = stored.index;
      const centers: Float32Array[] = [];
      let seq = 0;
      // 600 clusters of 40 rows 0.001-0.01 apart: more near-equal rows than the heap keeps (40 for k 10).
      for (let c = 0; c < 600; c++) {
        const center = c % 2 ? unit(r) : sparse(r);
        centers.push(center);
        for (let m = 0; m < 40; m++) stored.upsert(++seq, near(center, r, m < 20 ? 0.001 : 0.01), `p${c % 5}`);
      }
      const rescans = countRescans(index);
      const queries = Array.from({ length: 24 }, (_, q) => near(centers[q * 23], r, 0.002));
      expectExact(stored, queries, [null, "p0", "p3"]);
      expect(rescans.used).toBeGreaterThan(0);
    },
    60_000,
  );
}

sqliteOnly(
  "many exact ties: the lowest seqs win, wherever the rows sit, after removals and a restore",
  () => {
    const r = rng(11);
    const stored = new Stored(new VectorIndex());
    const index = stored.index;
    const same = unit(r);
    const other = unit(r);
    // Equal rows added in descending seq order (slot order and seq order disagree), among 20k others.
    for (let seq = 30_000; seq > 27_000; seq--) stored.upsert(seq, seq % 3 ? same : other, seq % 2 ? "a" : "b");
    for (let seq = 1; seq <= 20_000; seq++) stored.upsert(seq, unit(r), seq % 2 ? "a" : "b");
    for (let seq = 27_001; seq <= 27_100; seq += 7) stored.remove(seq);
    const rescans = countRescans(index);
    const queries = [same, other, near(same, r, 0.001), normalize(same.map((x, i) => x + other[i]))];
    expectExact(stored, queries, [null, "a", "b"], [1, 10, 60, 3]);
    expect(rescans.used).toBeGreaterThan(0);
    const copy = new VectorIndex();
    copy.restore(index.snapshot());
    // A restored index has its int8 rows only: it reads the floats it needs from its source (vec0 in the engine).
    copy.vectorSource = stored.source;
    expectExact(stored, queries, [null, "a"], [10, 60, 3, 1], copy);
  },
  60_000,
);

sqliteOnly(
  "one project holding most rows: its search and a small project's are exact",
  () => {
    const r = rng(17);
    const stored = new Stored(new VectorIndex());
    const cores = Array.from({ length: 300 }, () => sparse(r));
    let seq = 0;
    for (let i = 0; i < 24_000; i++) {
      const core = cores[i % cores.length];
      // 95 % in "big"; the rest in "small" and "tiny", interleaved (rows in several runs).
      const group = i % 20 === 0 ? "small" : i % 97 === 0 ? "tiny" : "big";
      stored.upsert(++seq, near(core, r, 0.3), group);
    }
    const queries = Array.from({ length: 20 }, (_, q) => near(cores[q * 13], r, 0.2));
    expectExact(stored, queries, [null, "big", "small", "tiny"]);
  },
  60_000,
);

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
      if ((i % block) + h >= block) continue;
      for (let j = i; j < i + h; j++) {
        const a = w[j];
        const b = w[j + h];
        w[j] = a + b;
        w[j + h] = a - b;
      }
    }
  }
}

sqliteOnly(
  "rows whose codes collide but whose similarities differ: the exact top k",
  () => {
    const r = rng(23);
    const stored = new Stored(new VectorIndex());
    const index = stored.index;
    const bases = Array.from({ length: 200 }, () => unit(r));
    // Queries are near a family's own members, so its rows fill the top 60 with differing similarities.
    let seq = 0;
    const family: number[] = [];
    for (const [b, base] of bases.entries()) {
      for (let m = 0; m < 60; m++) {
        stored.upsert(++seq, sameCode(base, r, 1), b % 2 ? "x" : "y");
        if (b === 0) family.push(seq);
      }
    }
    for (let i = 0; i < 10_000; i++) stored.upsert(++seq, unit(r), i % 2 ? "x" : "y");
    // The family's codes (from their int8 rows) nearly coincide, nibble by nibble: int8 rounding
    // moves a value across a step now and then. Their similarities to the queries do not.
    const snap = index.snapshot();
    const slotOf = new Map([...snap.seqs].map((s, i) => [s, i]));
    const codeOf = (seq: number) => snap.codes.subarray(slotOf.get(seq)! * CODE_BYTES, (slotOf.get(seq)! + 1) * CODE_BYTES);
    const first = codeOf(family[0]);
    let differ = 0;
    for (const seq of family.slice(1)) {
      const code = codeOf(seq);
      for (let b = 0; b < CODE_BYTES; b++) differ += +((code[b] & 15) !== (first[b] & 15)) + +(code[b] >> 4 !== first[b] >> 4);
    }
    expect(differ / (family.length - 1)).toBeLessThan(16);
    const queries = [
      ...Array.from({ length: 8 }, (_, q) => near(sameCode(bases[q], r, 1), r, 0.05)),
      ...Array.from({ length: 8 }, (_, q) => normalize(sameCode(bases[q], r, 1))),
    ];
    const spread = exactTop(stored, queries[0], 60, null)
      .filter((h) => family.includes(h.seq))
      .map((h) => h.similarity);
    expect(Math.max(...spread) - Math.min(...spread)).toBeGreaterThan(0.05);
    expectExact(stored, queries, [null, "x", "y"]);
  },
  60_000,
);

/** `v` with every value moved within its int8 rounding step (at most 0.2 of a step from its int8 value): the same int8 row, another float vector. */
function sub(v: Float32Array, r: () => number): Float32Array {
  let max = 0;
  for (const x of v) max = Math.max(max, Math.abs(x));
  const step = max / 127;
  // The largest value stays put, so the scale (and every other value's step) stays the same.
  return v.map((x) => {
    if (Math.abs(x) === max) return x;
    const t = Math.min(126.9, Math.max(-126.9, Math.round(x / step) + r() * 0.4));
    return t * step;
  });
}

for (const relaxedSimd of [true, false]) {
  sqliteOnly(
    `rows equal in int8 but not in float: the float order decides (${relaxedSimd ? "relaxed" : "portable"} SIMD)`,
    () => {
      const r = rng(relaxedSimd ? 31 : 37);
      const stored = new Stored(new VectorIndex({ relaxedSimd }));
      const index = stored.index;
      const bases = Array.from({ length: 60 }, (_, b) => (b % 2 ? unit(r) : sparse(r)));
      let seq = 0;
      // 60 families of 100 rows whose int8 rows coincide (checked below): only their floats order them.
      for (const [b, base] of bases.entries()) for (let m = 0; m < 100; m++) stored.upsert(++seq, sub(base, r), b % 3 ? "m" : "n");
      for (let i = 0; i < 6000; i++) stored.upsert(++seq, unit(r), i % 3 ? "m" : "n");
      const snap = index.snapshot();
      const slotOf = new Map([...snap.seqs].map((s, i) => [s, i]));
      const rowOf = (s: number) => snap.rows.subarray(slotOf.get(s)! * DIMS, (slotOf.get(s)! + 1) * DIMS).join();
      const sameRows = Array.from({ length: 99 }, (_, m) => +(rowOf(m + 2) === rowOf(1))).reduce((a, b) => a + b, 0);
      expect(sameRows).toBeGreaterThan(90);
      const queries = Array.from({ length: 16 }, (_, q) => (q % 2 ? near(bases[q], r, 0.3) : bases[q]));
      // The int8 order alone (the previous search's similarity) gets most of these wrong: the test can fail.
      const int8Top = (q: Float32Array) => {
        const all = [...stored.vectors.keys()].map((s) => {
          const o = slotOf.get(s)! * DIMS;
          let d = 0;
          for (let i = 0; i < DIMS; i++) d += snap.rows[o + i] * q[i];
          return { seq: s, similarity: d * snap.scales[slotOf.get(s)!] };
        });
        all.sort((a, b) => b.similarity - a.similarity || a.seq - b.seq);
        return all
          .slice(0, 10)
          .map((h) => h.seq)
          .join();
      };
      const int8Right = queries.filter(
        (q) =>
          int8Top(q) ===
          exactTop(stored, q, 10, null)
            .map((h) => h.seq)
            .join(),
      ).length;
      expect(int8Right).toBeLessThan(queries.length / 2);
      expectExact(stored, queries, [null, "m", "n"]);
    },
    60_000,
  );
}

sqliteOnly(
  "a restored index reads missing floats from its source, keeps only the vector its int8 row was made from, and stays exact",
  () => {
    const r = rng(41);
    const stored = new Stored(new VectorIndex());
    const bases = Array.from({ length: 40 }, () => unit(r));
    let seq = 0;
    for (const base of bases) for (let m = 0; m < 50; m++) stored.upsert(++seq, sub(base, r), m % 2 ? "a" : null);
    const copy = new VectorIndex();
    copy.restore(stored.index.snapshot());
    expect(copy.floatsMissing).toBe(seq);
    // A source that answers with another vector (written since, not yet replayed): not kept.
    expect(copy.adoptFloat(1, unit(r))).toBe(false);
    expect(copy.adoptFloat(1, stored.vectors.get(1)!.v)).toBe(true);
    expect(copy.adoptFloat(1, stored.vectors.get(1)!.v)).toBe(false);
    let reads = 0;
    copy.vectorSource = (s) => {
      reads++;
      return stored.source(s);
    };
    const queries = bases.slice(0, 12).map((b) => near(b, r, 0.1));
    expectExact(stored, queries, [null, "a", ""], [10, 3, 60, 1], copy);
    expect(reads).toBeGreaterThan(0);
    // Read once, kept: the same searches again read nothing more.
    const before = reads;
    expectExact(stored, queries, [null, "a", ""], [10, 3, 60, 1], copy);
    expect(reads).toBe(before);
    expect(copy.floatsMissing).toBeLessThan(seq);
  },
  60_000,
);

sqliteOnly(
  "the bound settles an ordinary store with few rows rescored (the cost stays near the int8 scan)",
  () => {
    const r = rng(43);
    const stored = new Stored(new VectorIndex());
    const index = stored.index;
    for (let seq = 1; seq <= 30_000; seq++) stored.upsert(seq, seq % 2 ? unit(r) : sparse(r), `p${seq % 7}`);
    const queries = Array.from({ length: 20 }, () => near(stored.vectors.get(1 + Math.floor((r() + 0.5) * 29_999))!.v, r, 0.5));
    index.stats = { searches: 0, scanned: 0, rescored: 0, rescans: 0 };
    expectExact(stored, queries, [null, "p3"], [10], index, { many: false });
    expect(index.stats.searches).toBe(40);
    // Exact with about 40 of 30,000 (or 4,300) rows rescored a search, not by rescoring them all.
    const perSearch = index.stats.rescored / index.stats.searches;
    expect(perSearch).toBeLessThan(200);
    // With a threshold above these similarities (searchMany, an import's), rows whose int8 score
    // cannot reach it are not rescored at all: the same hits (none here), almost no float work.
    const best = Math.max(...queries.map((q) => exactTop(stored, q, 1, null)[0].similarity));
    index.stats = { searches: 0, scanned: 0, rescored: 0, rescans: 0 };
    const many = index.searchMany(
      queries.map((vector) => ({ vector, k: 10, group: null })),
      best + 0.05,
    );
    expect(many.flat()).toEqual([]);
    expect(index.stats.rescored / index.stats.searches).toBeLessThan(perSearch / 4);
  },
  60_000,
);

for (const relaxedSimd of [true, false]) {
  sqliteOnly(
    `rows whose int8 score is below the heap's while their float is above: found by the rows' own rounding bound (${relaxedSimd ? "relaxed" : "portable"} SIMD)`,
    () => {
      const r = rng(relaxedSimd ? 53 : 59);
      const stored = new Stored(new VectorIndex({ relaxedSimd }));
      const step = 1 / 127;
      // A ternary query (0 or +-c): its int8 form is exact, so the query's rounding bounds nothing here.
      const sign = new Float32Array(DIMS).map((_, i) => (i > 0 && i <= 120 ? (r() > 0 ? 1 : -1) : 0));
      const query = sign.map((x) => x * 0.09);
      // The base, near the query: every value on its int8 step, the largest (1) fixing the scale at 1/127.
      const base = new Float32Array(DIMS).map((_, i) => (i === 0 ? 1 : (sign[i] || 1) * Math.round((r() + 0.5) * 40) * step));
      let seq = 0;
      // 100 rows one step higher than the base on 10 of the query's dimensions (int8 score higher,
      // float = int8), then 20 rows on the base's int8 values but 0.45 of a step towards the query on
      // every one of its dimensions (int8 score lower by 10 steps, float higher by 54 - 10).
      for (let m = 0; m < 100; m++)
        stored.upsert(
          ++seq,
          base.map((x, i) => (i >= 1 + (m % 100) && i < 11 + (m % 100) ? x + sign[i] * step : x)),
          "p",
        );
      const up = new Set<number>();
      for (let m = 0; m < 20; m++) {
        stored.upsert(
          ++seq,
          base.map((x, i) => x + sign[i] * 0.45 * step),
          "p",
        );
        up.add(seq);
      }
      for (let i = 0; i < 3000; i++) stored.upsert(++seq, unit(r), i % 2 ? "p" : "q");
      const top = stored.index.search(query, 10, null);
      expect(top.every((h) => up.has(h.seq))).toBe(true);
      expectExact(stored, [query], [null, "p"], [10]);
    },
    60_000,
  );
}
