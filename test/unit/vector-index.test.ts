import { expect, test } from "bun:test";
import { VECTOR_COARSE_ABOVE } from "../../src/core/tuning";
import { VectorIndex } from "../../src/core/vector-index";

function rng(seed: number) {
  return () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return seed / 2 ** 32 - 0.5;
  };
}
function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  return v.map((x) => x / n);
}
const unit = (r: () => number) => normalize(new Float32Array(384).map(() => r()));
const near = (v: Float32Array, r: () => number, noise: number) => normalize(v.map((x) => x + r() * noise));

for (const clusters of [1000, 4000]) test(`prefiltered search returns each cluster's members first (${clusters * 10} vectors: ${clusters * 10 > VECTOR_COARSE_ABOVE ? "coarse + full" : "full"} Hamming pass)`, () => {
  const r = rng(7);
  const index = new VectorIndex();
  const centers: Float32Array[] = [];
  let seq = 0;
  // Clusters of 10 paraphrase-like vectors: the true top 10 of a query is its cluster.
  for (let c = 0; c < clusters; c++) {
    const center = unit(r);
    centers.push(center);
    for (let m = 0; m < 10; m++) index.upsert(++seq, near(center, r, 0.08), c % 2 ? "odd" : "even");
  }
  let agree = 0;
  for (let q = 0; q < 50; q++) {
    const c = q * 19;
    const got = index.search(near(centers[c], r, 0.08), 10).map((h) => Math.floor((h.seq - 1) / 10));
    agree += got.filter((x) => x === c).length;
  }
  expect(agree / 500).toBeGreaterThan(0.95);
  const odd = index.search(near(centers[3], r, 0.08), 10, "odd");
  expect(odd.every((h) => Math.floor((h.seq - 1) / 10) % 2 === 1)).toBe(true);
  expect(odd[0].similarity).toBeGreaterThan(0.8);
  expect(index.search(centers[4], 10, "odd").some((h) => Math.floor((h.seq - 1) / 10) === 4)).toBe(false);
});

test("group filter, remove, regroup and compaction keep results right", () => {
  const r = rng(1);
  const index = new VectorIndex();
  const vs = Array.from({ length: 3000 }, () => unit(r));
  vs.forEach((v, i) => index.upsert(i + 1, v, i < 1500 ? "a" : "b"));
  expect(index.search(vs[10], 1, "a")[0].seq).toBe(11);
  expect(index.search(vs[10], 5, "b").every((h) => h.seq > 1500)).toBe(true);
  expect(index.search(vs[10], 5, "missing")).toEqual([]);
  for (let i = 1; i <= 2000; i++) index.remove(i);
  expect(index.size).toBe(1000);
  expect(index.search(vs[2500], 1)[0].seq).toBe(2501);
  expect(index.search(vs[10], 3).some((h) => h.seq <= 2000)).toBe(false);
  index.regroup(2501, "c");
  expect(index.search(vs[2500], 1, "c")[0].seq).toBe(2501);
  expect(index.search(vs[2500], 1, "b")[0]?.seq).not.toBe(2501);
  const hit = index.search(vs[2999], 1)[0];
  expect(hit.similarity).toBeGreaterThan(0.98);
});
