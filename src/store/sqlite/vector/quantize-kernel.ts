import { DIMENSIONS } from "../../../embed/types";
import { compileKernel, I32, kernelModule, op, SIMD, uleb, V128, vec } from "./wasm-bytes";

/**
 * vector-index.ts's quantize() of a stored vector (to int8 in [-127, 127],
 * no offset) in WebAssembly SIMD: most of what loading the index from vec0
 * costs in JavaScript (~2.5 us a vector, ~0.25 s CPU at 100k).
 *
 * The same integers, scale and sum as the JavaScript, bit for bit: the
 * maximum of |v| is taken in f32 lanes (exact, and a NaN never wins, as with
 * `a > max`), then each value is promoted to f64 (exact) and rounded as
 * quantize() does: f = floor(v * inv), plus one when v * inv - f >= 0.5.
 *
 * quantize(src, dst, sum): DIMENSIONS f32 at byte `src` become DIMENSIONS
 * int8 at byte `dst`; their sum (i32) is stored at byte `sum`; returns the
 * scale (float = int * scale).
 */

const F64 = 0x7c;
const s = {
  v128Store: (offset: number) => [...SIMD(0x0b), 0, ...uleb(offset)],
  v128Const: (bytes: number[]) => [...SIMD(0x0c), ...bytes],
  shuffle: (lanes: number[]) => [...SIMD(0x0d), ...lanes],
  f64x2Splat: SIMD(0x14),
  f32x4ExtractLane: (l: number) => [...SIMD(0x1f), l],
  i32x4ExtractLane: (l: number) => [...SIMD(0x1b), l],
  f64x2Ge: SIMD(0x4c),
  f64x2PromoteLowF32x4: SIMD(0x5f),
  i8x16NarrowI16x8S: SIMD(0x65),
  f64x2Floor: SIMD(0x75),
  i16x8NarrowI32x4S: SIMD(0x85),
  i32x4Add: SIMD(0xae),
  i32x4Sub: SIMD(0xb1),
  f32x4Abs: SIMD(0xe0),
  f32x4Pmax: SIMD(0xeb),
  f64x2Sub: SIMD(0xf1),
  f64x2Mul: SIMD(0xf2),
  i32x4TruncSatF64x2SZero: SIMD(0xfc),
  f32Max: [0x97],
  f64PromoteF32: [0xbb],
  f64Div: [0xa3],
  f64Gt: [0x64],
  f64Const: (x: number) => [0x44, ...new Uint8Array(new Float64Array([x]).buffer)],
  select: [0x1b],
  i32LtU: [0x49],
};
const ZERO = s.v128Const(new Array(16).fill(0));
const HALF = s.v128Const([...new Uint8Array(new Float64Array([0.5, 0.5]).buffer)]);
/** f32 lanes 2-3 moved to lanes 0-1. */
const HIGH_PAIR = s.shuffle([8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15]);
/** The low i32 of each i64 lane of a mask (lanes 0, 1), then zeros (from the second operand). */
const MASK_PAIR = s.shuffle([0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23]);
/** i32x4 lanes 0-1 of the first operand, then lanes 0-1 of the second. */
const JOIN_PAIRS = s.shuffle([0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]);

function quantizeFunction(): number[] {
  // Params 0..2: src, dst, sum. Locals: i32 I; f64 MAX, SCALE; v128 ACC, INV, SUM, V, Q0..Q3, FL.
  const I = 3;
  const MAX = 4;
  const SCALE = 5;
  const ACC = 6;
  const INV = 7;
  const SUM = 8;
  const V = 9;
  const Q = 10;
  const FL = Q + 4;
  const body: number[] = [];
  const put = (...parts: number[][]) => {
    for (const part of parts) for (const b of part) body.push(b);
  };
  const get = op.localGet;
  const set = op.localSet;
  // The largest |v|, four lanes, then across them.
  put(ZERO, set(ACC), op.i32Const(0), set(I), op.loop);
  put(get(ACC), get(0), get(I), op.i32Add, op.v128Load(0), s.f32x4Abs, s.f32x4Pmax, set(ACC));
  put(get(I), op.i32Const(16), op.i32Add, op.localTee(I), op.i32Const(DIMENSIONS * 4), s.i32LtU, op.brIf(0), op.end);
  put(
    get(ACC),
    s.f32x4ExtractLane(0),
    get(ACC),
    s.f32x4ExtractLane(1),
    s.f32Max,
    get(ACC),
    s.f32x4ExtractLane(2),
    s.f32Max,
    get(ACC),
    s.f32x4ExtractLane(3),
    s.f32Max,
  );
  put(s.f64PromoteF32, set(MAX));
  // scale = max > 0 ? max / 127 : 1; inv = 1 / scale.
  put(get(MAX), s.f64Const(127), s.f64Div, s.f64Const(1), get(MAX), s.f64Const(0), s.f64Gt, s.select, set(SCALE));
  put(s.f64Const(1), get(SCALE), s.f64Div, s.f64x2Splat, set(INV));
  /** Two values (lanes 0-1 of the f64x2 on the stack) rounded as quantize() does: i32 lanes [a, b, 0, 0]. */
  const round2 = () => {
    put(get(INV), s.f64x2Mul, set(V));
    put(get(V), s.f64x2Floor, op.localTee(FL));
    put(s.i32x4TruncSatF64x2SZero);
    put(get(V), get(FL), s.f64x2Sub, HALF, s.f64x2Ge, ZERO, MASK_PAIR);
    // The mask is -1 where v * inv - f >= 0.5: subtracting it adds one.
    put(s.i32x4Sub);
  };
  // Sixteen values a turn: four i32x4, narrowed to one i8x16.
  put(ZERO, set(SUM), op.i32Const(0), set(I), op.loop);
  for (let q = 0; q < 4; q++) {
    put(get(0), get(I), op.i32Const(2), [0x74] /* i32.shl */, op.i32Add, op.v128Load(q * 16), op.localTee(Q + q));
    put(s.f64x2PromoteLowF32x4);
    round2();
    put(get(Q + q), get(Q + q), HIGH_PAIR, s.f64x2PromoteLowF32x4);
    round2();
    put(JOIN_PAIRS, set(Q + q));
  }
  put(get(SUM), get(Q), s.i32x4Add, get(Q + 1), s.i32x4Add, get(Q + 2), s.i32x4Add, get(Q + 3), s.i32x4Add, set(SUM));
  put(get(1), get(I), op.i32Add);
  put(get(Q), get(Q + 1), s.i16x8NarrowI32x4S, get(Q + 2), get(Q + 3), s.i16x8NarrowI32x4S, s.i8x16NarrowI16x8S, s.v128Store(0));
  put(get(I), op.i32Const(16), op.i32Add, op.localTee(I), op.i32Const(DIMENSIONS), s.i32LtU, op.brIf(0), op.end);
  put(
    get(2),
    get(SUM),
    s.i32x4ExtractLane(0),
    get(SUM),
    s.i32x4ExtractLane(1),
    op.i32Add,
    get(SUM),
    s.i32x4ExtractLane(2),
    op.i32Add,
    get(SUM),
    s.i32x4ExtractLane(3),
    op.i32Add,
    op.i32Store(0),
  );
  put(get(SCALE), op.end);
  return [
    ...vec([
      [1, I32],
      [2, F64],
      [FL + 1 - ACC, V128],
    ]),
    ...body,
  ];
}

function moduleBytes(): Uint8Array<ArrayBuffer> {
  const fn = quantizeFunction();
  return kernelModule([{ name: "quantize", params: [I32, I32, I32], results: [F64], body: fn }]);
}

export type QuantizeFn = (src: number, dst: number, sum: number) => number;

let compiled: WebAssembly.Module | null | undefined;

/** The SIMD quantizer over `memory`, or null without WebAssembly SIMD. */
export function quantizeKernel(memory: WebAssembly.Memory): QuantizeFn | null {
  if (compiled === undefined) {
    const bytes = moduleBytes();
    compiled = compileKernel(bytes);
  }
  return compiled ? (new WebAssembly.Instance(compiled, { env: { memory } }).exports.quantize as QuantizeFn) : null;
}
