import { compileKernel, I32, kernelModule, op, uleb, V128, vec } from "./wasm-bytes";

/**
 * A scan of 4-bit codes against an int8 query in WebAssembly SIMD: the vector
 * index's prefilter (vector-index.ts, projection.ts). A code row is `dims`
 * unsigned nibbles in dims / 2 bytes; 16 bytes hold 32 values, the low
 * nibbles values 0-15 of the group, the high nibbles values 16-31, so one
 * load gives two lanes of 16 with one `and` and one byte shift, no shuffles.
 *
 * scan(query, codes, n, out): out[i] = sum(query[j] * code_i[j]) as i32 for
 * `n` consecutive rows from byte `codes`; the query is `dims` int8 values in
 * [-127, 127]. The nibbles are the unsigned 7-bit operand relaxed SIMD's dot
 * product wants, so the query needs no offset (unlike int8-kernel.ts).
 */

function scanFunction(relaxed: boolean, dims: number): number[] {
  // Params 0..3: query, codes, n, out. Locals: dims / 16 query vectors, the nibble mask, the loaded bytes, two accumulators.
  const chunks = dims / 16;
  const Q = 4;
  const MASK = Q + chunks;
  const V = MASK + 1;
  const A = V + 1;
  const B = A + 1;
  const body: number[] = [];
  for (let k = 0; k < chunks; k++) body.push(...op.localGet(0), ...op.v128Load(k * 16), ...op.localSet(Q + k));
  body.push(...op.v128Splat8(0x0f), ...op.localSet(MASK));
  body.push(...op.block, ...op.loop);
  body.push(...op.localGet(2), ...op.i32Eqz, ...op.brIf(1));
  body.push(...op.v128Zero, ...op.localSet(A), ...op.v128Zero, ...op.localSet(B));
  // Relaxed: 16-bit accumulators, one add per dot instead of a widening dot-add (~15 % faster here, no
  // VNNI). Exact: a lane gathers dims / 16 pair sums of at most 2 * 127 * 15, 30480 for 128 dims.
  const narrow = relaxed && (dims / 16) * 2 * 127 * 15 <= 32767;
  // `dot(q, lanes)`: q * lanes summed into the accumulator `acc`.
  const dot = (q: number, lanes: number[], acc: number) => {
    if (narrow) return [...op.localGet(q), ...lanes, ...op.i16x8RelaxedDot, ...op.localGet(acc), ...op.i16x8Add, ...op.localSet(acc)];
    if (relaxed) return [...op.localGet(q), ...lanes, ...op.localGet(acc), ...op.i32x4RelaxedDotAdd, ...op.localSet(acc)];
    return [
      ...op.localGet(q),
      ...lanes,
      ...op.i16x8ExtmulLowS,
      ...op.localGet(q),
      ...lanes,
      ...op.i16x8ExtmulHighS,
      ...op.i16x8Add,
      ...op.i32x4ExtaddPairwiseS,
      ...op.localGet(acc),
      ...op.i32x4Add,
      ...op.localSet(acc),
    ];
  };
  for (let g = 0; g < chunks / 2; g++) {
    body.push(...op.localGet(1), ...op.v128Load(g * 16), ...op.localSet(V));
    body.push(...dot(Q + 2 * g, [...op.localGet(V), ...op.localGet(MASK), ...op.v128And], A));
    body.push(...dot(Q + 2 * g + 1, [...op.localGet(V), ...op.i32Const(4), ...op.i8x16ShrU], B));
  }
  if (narrow) body.push(...op.localGet(A), ...op.localGet(B), ...op.i16x8Add, ...op.i32x4ExtaddPairwiseS, ...op.localSet(A));
  else body.push(...op.localGet(A), ...op.localGet(B), ...op.i32x4Add, ...op.localSet(A));
  body.push(...op.localGet(3));
  body.push(...op.localGet(A), ...op.i32x4ExtractLane(0), ...op.localGet(A), ...op.i32x4ExtractLane(1), ...op.i32Add);
  body.push(...op.localGet(A), ...op.i32x4ExtractLane(2), ...op.i32Add, ...op.localGet(A), ...op.i32x4ExtractLane(3), ...op.i32Add);
  body.push(...op.i32Store(0));
  body.push(...op.localGet(1), ...op.i32Const(dims / 2), ...op.i32Add, ...op.localSet(1));
  body.push(...op.localGet(3), ...op.i32Const(4), ...op.i32Add, ...op.localSet(3));
  body.push(...op.localGet(2), ...op.i32Const(1), ...op.i32Sub, ...op.localSet(2));
  body.push(...op.br(0), ...op.end, ...op.end, ...op.end);
  return [...vec([[...uleb(chunks + 4), V128]]), ...body];
}

function moduleBytes(relaxed: boolean, dims: number): Uint8Array<ArrayBuffer> {
  const scan = scanFunction(relaxed, dims);
  return kernelModule([{ name: "scan", params: [I32, I32, I32, I32], results: [], body: scan }]);
}

export type CodeScanFn = (query: number, codes: number, n: number, out: number) => void;

const compiled = new Map<string, WebAssembly.Module | null>();

/** The 4-bit code scan over `memory` for codes of `dims` values (a multiple of 32), relaxed SIMD if allowed and available, or null without WebAssembly SIMD. */
export function int4Kernel(memory: WebAssembly.Memory, dims: number, allowRelaxed = true): { scan: CodeScanFn; kind: "relaxed-simd" | "simd" } | null {
  if (dims <= 0 || dims % 32 !== 0) throw new Error(`4-bit codes come in groups of 32 values, not ${dims}`);
  for (const relaxed of allowRelaxed ? [true, false] : [false]) {
    const key = `${relaxed}:${dims}`;
    if (!compiled.has(key)) {
      const bytes = moduleBytes(relaxed, dims);
      compiled.set(key, compileKernel(bytes));
    }
    const module = compiled.get(key);
    if (module) return { scan: new WebAssembly.Instance(module, { env: { memory } }).exports.scan as CodeScanFn, kind: relaxed ? "relaxed-simd" : "simd" };
  }
  return null;
}
