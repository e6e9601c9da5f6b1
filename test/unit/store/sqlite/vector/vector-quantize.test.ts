import { expect, test } from "bun:test";
import { VectorIndex } from "../../../../../src/store/sqlite/vector/vector-index";
import { DIMENSIONS } from "../../../../../src/embed/types";

// The index's quantiser rounds with floor-plus-carry for speed; it must give exactly Math.round's integers,
// or an index loaded today would differ from one saved before (and from the row path it is checked against).
test("the int8 quantiser rounds exactly as Math.round, halves and signed zeros included", () => {
  const vectors: Float32Array[] = [];
  // Max 127 makes the scale 1: every value is its own scaled value, so ties at .5 are hit exactly.
  const ties = new Float32Array(DIMENSIONS);
  for (let i = 0; i < DIMENSIONS; i++) ties[i] = i === 0 ? 127 : (i % 254) - 127 + (i % 2 ? 0.5 : -0.5);
  vectors.push(ties);
  const near = new Float32Array(DIMENSIONS);
  near[0] = -127;
  for (let i = 1; i < DIMENSIONS; i++) near[i] = Math.fround((i % 2 ? 1 : -1) * ((i % 60) + 0.5) + (i % 3 === 0 ? 1e-5 : i % 3 === 1 ? -1e-5 : 0));
  vectors.push(near);
  const zeros = new Float32Array(DIMENSIONS);
  for (let i = 0; i < DIMENSIONS; i++) zeros[i] = i % 2 ? -0 : 0;
  zeros[5] = 0.25;
  vectors.push(zeros, new Float32Array(DIMENSIONS));
  let x = 12345;
  for (let v = 0; v < 200; v++) {
    const r = new Float32Array(DIMENSIONS);
    for (let i = 0; i < DIMENSIONS; i++) {
      x = (x * 1103515245 + 12345) % 2147483648;
      r[i] = (x / 2147483648 - 0.5) * (v % 7 === 0 ? 1e-30 : 0.3);
    }
    vectors.push(r);
  }
  const index = new VectorIndex();
  vectors.forEach((v, i) => {
    index.upsert(i + 1, v, null);
  });
  const rows = index.snapshot().rows;
  vectors.forEach((v, k) => {
    let max = 0;
    for (const a of v) max = Math.max(max, Math.abs(a));
    const inv = 1 / (max > 0 ? max / 127 : 1);
    const expected = Array.from(v, (a) => Math.round(a * inv) | 0);
    expect(Array.from(rows.subarray(k * DIMENSIONS, (k + 1) * DIMENSIONS))).toEqual(expected);
  });
  // The tie vector really holds halves of both signs (ties-to-even or truncation would differ there).
  expect(ties.some((a) => a < 0 && a % 1 === -0.5) && ties.some((a) => a > 0 && a % 1 === 0.5)).toBe(true);
});
