import { expect, test } from "bun:test";
import { VectorIndex } from "../../../../../src/store/sqlite/vector";
import { ENCODE_WORK_BYTES, encodeKernel } from "../../../../../src/store/sqlite/vector/encode-kernel";
import { CODE_BYTES, encode } from "../../../../../src/store/sqlite/vector/projection";
import { quantizeKernel } from "../../../../../src/store/sqlite/vector/quantize-kernel";
import { quantize } from "../../../../../src/store/sqlite/vector/vector-index";

const D = 384;
const sqliteOnly = (name: string, fn: () => void, timeout?: number) =>
  test.skipIf(process.env.MEMSVC_TEST_ENGINE === "postgres")(`${name} [SQLite engine's in-memory index]`, fn, timeout);

function rng(seed: number) {
  return () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

/** Rows of every shape the index holds: dense, sparse (the offline embedder's), one value, all zero, the extremes. */
function rows(n: number): Int8Array {
  const r = rng(7);
  const out = new Int8Array(n * D);
  for (let i = 0; i < n; i++) {
    const row = out.subarray(i * D, (i + 1) * D);
    const kind = i % 6;
    if (kind === 0) for (let j = 0; j < D; j++) row[j] = Math.round((r() - 0.5) * 254);
    else if (kind === 1) for (let j = 0; j < D; j++) row[j] = r() < 0.75 ? 0 : Math.round((r() - 0.5) * 254);
    else if (kind === 2) row[Math.floor(r() * D)] = r() < 0.5 ? 127 : -127;
    else if (kind === 3) row.fill(0);
    else if (kind === 4) for (let j = 0; j < D; j++) row[j] = r() < 0.5 ? 127 : -128;
    else row.fill(i % 2 ? 127 : -128);
  }
  return out;
}

sqliteOnly("the SIMD encoder writes the same codes and steps, bit for bit, as projection.ts's encode()", () => {
  const n = 1203; // not a multiple of 8: the caller pads the last group
  const data = rows(n);
  const ROWS = 65536;
  const memory = new WebAssembly.Memory({ initial: Math.ceil((ROWS + n * D) / 65536) });
  const kernel = encodeKernel(memory, 1024);
  expect(kernel).not.toBeNull();
  new Int8Array(memory.buffer, ROWS, n * D).set(data);
  const LIST = 1024 + ENCODE_WORK_BYTES;
  const batch = 64;
  const CODES = LIST + batch * 4;
  const STEPS = CODES + batch * CODE_BYTES;
  const codes = new Uint8Array(n * CODE_BYTES);
  const steps = new Float64Array(n);
  for (let at = 0; at < n; at += batch) {
    const count = Math.min(batch, n - at);
    const padded = (count + 7) & ~7;
    const list = new Int32Array(memory.buffer, LIST, padded);
    // Out of order: each row is read from its own address.
    for (let i = 0; i < padded; i++) list[i] = ROWS + (at + Math.min(i, count - 1)) * D;
    kernel!(LIST, padded, CODES, STEPS);
    codes.set(new Uint8Array(memory.buffer, CODES, count * CODE_BYTES), at * CODE_BYTES);
    steps.set(new Float64Array(memory.buffer, STEPS, count), at);
  }
  const expected = new Uint8Array(n * CODE_BYTES);
  const expectedSteps = new Float64Array(n);
  for (let i = 0; i < n; i++) expectedSteps[i] = encode(data.subarray(i * D, (i + 1) * D), expected, i * CODE_BYTES);
  expect(Buffer.from(codes)).toEqual(Buffer.from(expected));
  expect(Buffer.from(steps.buffer)).toEqual(Buffer.from(expectedSteps.buffer));
});

sqliteOnly("codes filled after a load skip removed rows and match rows coded one at a time", () => {
  const r = rng(11);
  const vs = Array.from({ length: 3000 }, () => Float32Array.from({ length: D }, () => (r() < 0.7 ? 0 : r() - 0.5)));
  const gone = new Set([5, 6, 7, 100, 1001, 2999]);
  const direct = new VectorIndex();
  const loaded = new VectorIndex();
  loaded.loading = true;
  vs.forEach((v, i) => {
    direct.upsert(i + 1, v, null);
    loaded.upsert(i + 1, v, null);
  });
  for (const seq of gone) {
    direct.remove(seq);
    loaded.remove(seq);
  }
  loaded.loading = false;
  while (loaded.fillCodes(700));
  const a = direct.snapshot();
  const b = loaded.snapshot();
  expect(b.seqs).toEqual(a.seqs);
  expect(Buffer.from(b.codes)).toEqual(Buffer.from(a.codes));
  expect(Buffer.from(b.codeSteps.buffer)).toEqual(Buffer.from(a.codeSteps.buffer));
});

sqliteOnly("the SIMD quantizer stores the same int8 values, scale and sum, bit for bit, as quantize() in JavaScript", () => {
  const r = rng(13);
  const memory = new WebAssembly.Memory({ initial: 1 });
  const quantizer = quantizeKernel(memory);
  expect(quantizer).not.toBeNull();
  const SRC = 0;
  const DST = D * 4;
  const SUM = DST + D;
  const vectors: Float32Array[] = [];
  for (let i = 0; i < 600; i++) {
    const kind = i % 6;
    const v = new Float32Array(D);
    if (kind === 0) for (let j = 0; j < D; j++) v[j] = (r() - 0.5) * 2;
    else if (kind === 1) for (let j = 0; j < D; j++) v[j] = r() < 0.75 ? 0 : (r() - 0.5) * 1e-3;
    else if (kind === 2) v[Math.floor(r() * D)] = r() < 0.5 ? 3 : -3;
    else if (kind === 4)
      for (let j = 0; j < D; j++) v[j] = Math.round((r() - 0.5) * 254) / 127 + (j % 2 ? 0.5 / 127 : -0.5 / 127); // values at .5 steps
    else if (kind === 5) for (let j = 0; j < D; j++) v[j] = j % 7 === 0 ? -0 : (r() - 0.5) * 1e6;
    vectors.push(v);
  }
  for (const v of vectors) {
    const expected = new Int8Array(D);
    const scale = quantize(v, expected, 0, 127, 0);
    new Float32Array(memory.buffer, SRC, D).set(v);
    const got = quantizer!(SRC, DST, SUM);
    expect(Object.is(got, scale)).toBe(true);
    expect(Buffer.from(new Int8Array(memory.buffer, DST, D))).toEqual(Buffer.from(expected.buffer));
    expect(new Int32Array(memory.buffer, SUM, 1)[0]).toBe(expected.reduce((a, b) => a + b, 0));
  }
});
