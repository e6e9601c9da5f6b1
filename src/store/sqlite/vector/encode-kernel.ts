import { DIMENSIONS } from "../../../embed/types";
import { CODE_BYTES, CODE_DIMS, projectionTables } from "./projection";
import { compileKernel, I32, kernelModule, op, SIMD, uleb, V128, vec } from "./wasm-bytes";

/**
 * projection.ts's encode() in WebAssembly SIMD, eight int8 rows at a time:
 * the prefilter codes of an index loaded in bulk. In JavaScript a row costs
 * ~3.9 us (0.39 s CPU at 100k), too much to do inside the background load,
 * and done after it the fill slowed the first searches (rows not coded yet
 * are scored exactly); here a row costs ~1 us (tuning.ts, INDEX_CODE_SLICE).
 *
 * Bit-identical to encode() by construction (the index file stores codes,
 * and queries are projected by the JavaScript): the inputs are int8, so
 * every value of the Hadamard transform is an integer below 2^15 in
 * magnitude, exact in i16 lanes whatever the order of the additions; the
 * rest (times the weight, the maximum, the step, floor(x / step)) is done in
 * f64 lanes with the same IEEE operations in the same order. The maximum of
 * |x| is taken over the integers first, then multiplied: rounding is
 * monotone, so max(round(|w| * c)) = round(max(|w|) * c).
 *
 * Layout: lane r of every vector belongs to row r of the eight, so each of
 * the transform's butterflies is one vector add and one subtract. The
 * transform's 384 positions (one i16x8 each) and the projection's tables
 * (permutation, signs, picked outputs, weights: written by encodeKernel) live
 * in a work area of the module's memory (ENCODE_WORK_BYTES). The passes are
 * loops, not unrolled: a ~130 KB unrolled function cost ~100 ms more CPU
 * in a cold process (slow baseline code, then a long optimising compile)
 * than it saved.
 *
 * encode(list, n, codes, steps): `list` holds `n` (a multiple of 8) i32 byte
 * addresses of int8 rows; writes row i's CODE_BYTES code at codes + i *
 * CODE_BYTES and its step (f64, what encode() returns) at steps + i * 8.
 */
const SCRATCH_BYTES = DIMENSIONS * 16;
const FROM_AT = SCRATCH_BYTES;
const SIGN_AT = FROM_AT + DIMENSIONS * 4;
const PICK_AT = SIGN_AT + DIMENSIONS * 4;
const WEIGHT_AT = PICK_AT + CODE_DIMS * 4;
/** The transform's positions, then the tables: i32 from[p], i32 sign[p], i32 address of picked[k], f64 weight[k]. */
export const ENCODE_WORK_BYTES = WEIGHT_AT + CODE_DIMS * 8;

const SIMD_OPS = {
  v128Store: (offset: number) => [...SIMD(0x0b), 0, ...uleb(offset)],
  v128Const: (bytes: number[]) => [...SIMD(0x0c), ...bytes],
  shuffle: (lanes: number[]) => [...SIMD(0x0d), ...lanes],
  i16x8Splat: SIMD(0x10),
  f64x2Splat: SIMD(0x14),
  i16x8ExtractLaneU: (l: number) => [...SIMD(0x19), l],
  i16x8ReplaceLane: (l: number) => [...SIMD(0x1a), l],
  i16x8Abs: SIMD(0x80),
  i16x8NarrowI32x4S: SIMD(0x85),
  i16x8Shl: SIMD(0x8b),
  i16x8Add: SIMD(0x8e),
  i16x8Sub: SIMD(0x91),
  i16x8Mul: SIMD(0x95),
  i16x8MinS: SIMD(0x96),
  i16x8MaxS: SIMD(0x98),
  i32x4ExtendLowI16x8S: SIMD(0xa7),
  f64x2Gt: SIMD(0x4a),
  v128Or: SIMD(0x50),
  v128Bitselect: SIMD(0x52),
  f64x2Floor: SIMD(0x75),
  f64x2Mul: SIMD(0xf2),
  f64x2Div: SIMD(0xf3),
  f64x2Max: SIMD(0xf5),
  i32x4TruncSatF64x2SZero: SIMD(0xfc),
  f64x2ConvertLowI32x4S: SIMD(0xfe),
  i32Load8S: (offset: number) => [0x2c, 0, ...uleb(offset)],
  i32Store8: (offset: number) => [0x3a, 0, ...uleb(offset)],
  f64Load: (offset: number) => [0x2b, 3, ...uleb(offset)],
  i32LtU: [0x49],
  i32And: [0x71],
  i32Shl: [0x74],
  i32ShrU: [0x76],
};
const s = SIMD_OPS;
const f64Bytes = (x: number): number[] => Array.from(new Uint8Array(new Float64Array([x, x]).buffer));
const i16Bytes = (x: number): number[] => Array.from(new Uint8Array(new Int16Array(8).fill(x).buffer));
const ZERO = s.v128Const(new Array(16).fill(0));
const [I16_0, I16_8, I16_15] = [0, 8, 15].map((x) => s.v128Const(i16Bytes(x)));
const [F64_0, F64_1, F64_8] = [0, 1, 8].map((x) => s.v128Const(f64Bytes(x)));
/** Row pair j (i16 lanes 2j, 2j+1) moved to lanes 0 and 1. */
const PAIR_SHUFFLES = [1, 2, 3].map((j) => s.shuffle([4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
/** i32x4 lanes 0-1 of the first operand, then lanes 0-1 of the second. */
const JOIN_PAIRS = s.shuffle([0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]);

/** Runs of consecutive code values with one weight: [first, end, weight]. */
function weightRuns(weight: Float64Array): [number, number, number][] {
  const runs: [number, number, number][] = [];
  for (let k = 0; k < weight.length; k++) {
    const last = runs[runs.length - 1];
    if (last && last[2] === weight[k]) last[1] = k + 1;
    else runs.push([k, k + 1, weight[k]]);
  }
  return runs;
}

function encodeFunction(work: number): number[] {
  const { block, from, sign, picked, weight } = projectionTables;
  if (
    DIMENSIONS % block !== 0 ||
    block !== 128 ||
    CODE_DIMS % 32 !== 0 ||
    from.length !== DIMENSIONS ||
    picked.length !== CODE_DIMS ||
    sign.length !== DIMENSIONS
  ) {
    throw new Error("encode kernel: unexpected projection shape");
  }
  const runs = weightRuns(weight);
  // Params 0..3: list, n, codes, steps. i32 locals: R (8 row addresses), P, A, F, G; v128: L (8), M (one per weight run), INV (4 row pairs), W, X, Y.
  const R = 4;
  const P = R + 8;
  const A = P + 1;
  const F = A + 1;
  const G = F + 1;
  const L = G + 1;
  const M = L + 8;
  const INV = M + runs.length;
  const W = INV + 4;
  const X = W + 1;
  const Y = X + 1;
  const body: number[] = [];
  const put = (...parts: number[][]) => {
    for (const part of parts) for (const b of part) body.push(b);
  };
  const get = op.localGet;
  const set = op.localSet;
  /** for (G = 0; G < count; G++) { inner } */
  const loop = (count: number, inner: () => void) => {
    put(op.i32Const(0), set(G), op.loop);
    inner();
    put(get(G), op.i32Const(1), op.i32Add, op.localTee(G), op.i32Const(count), s.i32LtU, op.brIf(0), op.end);
  };
  /** The transform's stages over the positions held in L[0..count): bit t of the list index is one stage. */
  const butterflies = (count: number) => {
    for (let h = 1; h < count; h *= 2) {
      for (let i = 0; i < count; i++) {
        if (i & h) continue;
        put(get(L + i), get(L + i + h), s.i16x8Add, get(L + i), get(L + i + h), s.i16x8Sub, set(L + i + h), set(L + i));
      }
    }
  };
  /** Loads (or stores) L[i] at address local A + i * stride. */
  const loadL = (count: number, stride: number) => {
    for (let i = 0; i < count; i++) put(get(A), op.v128Load(i * stride), set(L + i));
  };
  const storeL = (count: number, stride: number) => {
    for (let i = 0; i < count; i++) put(get(A), get(L + i), s.v128Store(i * stride));
  };

  put(op.block, op.loop);
  put(get(1), op.i32Eqz, op.brIf(1));
  for (let r = 0; r < 8; r++) put(get(0), op.i32Load(r * 4), set(R + r));
  // Gathering eight positions at a time (input from[p] of each row, times sign[p]), then stages 1, 2, 4 on them.
  // P: the table entry of the first position (work + FROM_AT + 4p), A: its vector (work + 16p).
  put(op.i32Const(work + FROM_AT), set(P), op.i32Const(work), set(A));
  loop(DIMENSIONS / 8, () => {
    for (let m = 0; m < 8; m++) {
      put(get(P), op.i32Load(m * 4), set(F), ZERO);
      for (let r = 0; r < 8; r++) put(get(R + r), get(F), op.i32Add, s.i32Load8S(0), s.i16x8ReplaceLane(r));
      put(get(P), op.i32Load(SIGN_AT - FROM_AT + m * 4), s.i16x8Splat, s.i16x8Mul, set(L + m));
    }
    butterflies(8);
    storeL(8, 16);
    put(get(P), op.i32Const(32), op.i32Add, set(P), get(A), op.i32Const(128), op.i32Add, set(A));
  });
  // Stages 8, 16, 32: group G (48 of them) is positions (G >> 3) * 64 + (G & 7) + 8m.
  loop(DIMENSIONS / 8, () => {
    put(
      op.i32Const(work),
      get(G),
      op.i32Const(3),
      s.i32ShrU,
      op.i32Const(10),
      s.i32Shl,
      op.i32Add,
      get(G),
      op.i32Const(7),
      s.i32And,
      op.i32Const(4),
      s.i32Shl,
      op.i32Add,
      set(A),
    );
    loadL(8, 128);
    butterflies(8);
    storeL(8, 128);
  });
  // Stage 64 (pairs never leave their block of 128): pair G (192) is positions (G >> 6) * 128 + (G & 63), + 64.
  loop(DIMENSIONS / 2, () => {
    put(
      op.i32Const(work),
      get(G),
      op.i32Const(6),
      s.i32ShrU,
      op.i32Const(11),
      s.i32Shl,
      op.i32Add,
      get(G),
      op.i32Const(63),
      s.i32And,
      op.i32Const(4),
      s.i32Shl,
      op.i32Add,
      set(A),
    );
    loadL(2, 1024);
    butterflies(2);
    storeL(2, 1024);
  });
  // Per row, the largest |value| kept, per run of one weight (integers); times the weight, the maximum of |x|.
  runs.forEach(([first, end], c) => {
    put(ZERO, set(M + c), op.i32Const(work + PICK_AT + first * 4), set(P));
    loop(end - first, () => {
      put(get(M + c), get(P), op.i32Load(0), op.v128Load(0), s.i16x8Abs, s.i16x8MaxS, set(M + c));
      put(get(P), op.i32Const(4), op.i32Add, set(P));
    });
  });
  /** Lanes 2j and 2j+1 of i16x8 local `v` as f64x2. */
  const pair = (v: number, j: number) => {
    if (j === 0) put(get(v));
    else put(get(v), get(v), PAIR_SHUFFLES[j - 1]);
    put(s.i32x4ExtendLowI16x8S, s.f64x2ConvertLowI32x4S);
  };
  for (let j = 0; j < 4; j++) {
    runs.forEach(([, , w], c) => {
      pair(M + c, j);
      put(s.v128Const(f64Bytes(w)), s.f64x2Mul);
      if (c > 0) put(s.f64x2Max);
    });
    // step = max > 0 ? max / 8 : 1; the inverse as encode() computes it.
    put(set(X));
    put(get(X), F64_8, s.f64x2Div, F64_1, get(X), F64_0, s.f64x2Gt, s.v128Bitselect, set(X));
    put(get(3), get(X), s.v128Store(j * 16));
    put(F64_1, get(X), s.f64x2Div, set(INV + j));
  }
  /** The eight rows' nibbles of the code value whose table entries are at local P + `entry` * 4 (and its weight at + 8 * entry) as i16x8: floor(x * inv) + 8 clamped to [0, 15]. */
  const nibbles = (entry: number) => {
    put(get(P), op.i32Load(entry * 4), op.v128Load(0), set(Y));
    put(get(A), s.f64Load(entry * 8), s.f64x2Splat, set(W));
    for (let j = 0; j < 4; j++) {
      pair(Y, j);
      put(get(W), s.f64x2Mul, get(INV + j), s.f64x2Mul, s.f64x2Floor, s.i32x4TruncSatF64x2SZero);
      // Two rows a vector: join pairs 0-1 with 2-3 and 4-5 with 6-7 into i32x4 lanes 0..3.
      if (j % 2 === 1) put(JOIN_PAIRS);
    }
    put(s.i16x8NarrowI32x4S, I16_8, s.i16x8Add, I16_0, s.i16x8MaxS, I16_15, s.i16x8MinS);
  };
  // Code byte G (64) holds value k = (G >> 4) * 32 + (G & 15) in its low nibble and k + 16 in its high one.
  loop(CODE_BYTES, () => {
    put(get(G), op.i32Const(4), s.i32ShrU, op.i32Const(5), s.i32Shl, get(G), op.i32Const(15), s.i32And, op.i32Add, set(F));
    put(get(F), op.i32Const(2), s.i32Shl, op.i32Const(work + PICK_AT), op.i32Add, set(P));
    put(get(F), op.i32Const(3), s.i32Shl, op.i32Const(work + WEIGHT_AT), op.i32Add, set(A));
    nibbles(0);
    nibbles(16);
    put(op.i32Const(4), s.i16x8Shl, s.v128Or, set(X));
    put(get(2), get(G), op.i32Add, set(F));
    for (let r = 0; r < 8; r++) put(get(F), get(X), s.i16x8ExtractLaneU(r), s.i32Store8(r * CODE_BYTES));
  });
  put(get(0), op.i32Const(32), op.i32Add, set(0));
  put(get(2), op.i32Const(8 * CODE_BYTES), op.i32Add, set(2));
  put(get(3), op.i32Const(64), op.i32Add, set(3));
  put(get(1), op.i32Const(8), op.i32Sub, set(1));
  put(op.br(0), op.end, op.end, op.end);
  return [
    ...vec([
      [G - R + 1, I32],
      [...uleb(Y - L + 1), V128],
    ]),
    ...body,
  ];
}

function moduleBytes(work: number): Uint8Array<ArrayBuffer> {
  const fn = encodeFunction(work);
  return kernelModule([{ name: "encode", params: [I32, I32, I32, I32], results: [], body: fn }]);
}

export type EncodeFn = (list: number, n: number, codes: number, steps: number) => void;

const compiled = new Map<number, WebAssembly.Module | null>();

/**
 * The SIMD encoder over `memory`, its work area (ENCODE_WORK_BYTES) at byte
 * `work`, where this writes the projection's tables; null without
 * WebAssembly SIMD.
 */
export function encodeKernel(memory: WebAssembly.Memory, work: number): EncodeFn | null {
  if (!compiled.has(work)) {
    const bytes = moduleBytes(work);
    compiled.set(work, compileKernel(bytes));
  }
  const module = compiled.get(work);
  if (!module) return null;
  const { from, sign, picked, weight } = projectionTables;
  new Int32Array(memory.buffer, work + FROM_AT, DIMENSIONS).set(from);
  new Int32Array(memory.buffer, work + SIGN_AT, DIMENSIONS).set(Int32Array.from(sign));
  new Int32Array(memory.buffer, work + PICK_AT, CODE_DIMS).set(Int32Array.from(picked, (p) => work + p * 16));
  new Float64Array(memory.buffer, work + WEIGHT_AT, CODE_DIMS).set(weight);
  return new WebAssembly.Instance(module, { env: { memory } }).exports.encode as EncodeFn;
}
