/**
 * WebAssembly binary encoding helpers for the hand-assembled SIMD kernels
 * (int8-kernel.ts, int4-kernel.ts, encode-kernel.ts, quantize-kernel.ts):
 * LEB128 numbers, vectors, sections, the module they all share, and the few
 * opcodes they use (WebAssembly 1.0, fixed-width SIMD, relaxed SIMD).
 */
export const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
export const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
export const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
export const str = (s: string): number[] => vec([...s].map((c) => [c.charCodeAt(0)]));

export const I32 = 0x7f;
export const V128 = 0x7b;
export const SIMD = (op: number): number[] => [0xfd, ...uleb(op)];
export const op = {
  localGet: (i: number) => [0x20, ...uleb(i)],
  localSet: (i: number) => [0x21, ...uleb(i)],
  localTee: (i: number) => [0x22, ...uleb(i)],
  i32Const: (v: number) => [0x41, ...sleb(v)],
  i32Add: [0x6a],
  i32Sub: [0x6b],
  i32Eqz: [0x45],
  i32Store: (offset: number) => [0x36, 2, ...uleb(offset)],
  i32Load: (offset: number) => [0x28, 2, ...uleb(offset)],
  i32Mul: [0x6c],
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  brIf: (d: number) => [0x0d, ...uleb(d)],
  br: (d: number) => [0x0c, ...uleb(d)],
  end: [0x0b],
  v128Load: (offset: number) => [...SIMD(0x00), 0, ...uleb(offset)],
  v128Zero: [...SIMD(0x0c), ...new Array(16).fill(0)],
  v128Splat8: (b: number) => [...SIMD(0x0c), ...new Array(16).fill(b & 0xff)],
  v128And: SIMD(0x4e),
  i8x16ShrU: SIMD(0x6d),
  i32x4ExtractLane: (l: number) => [...SIMD(0x1b), l],
  i16x8Add: SIMD(0x8e),
  i32x4Add: SIMD(0xae),
  i16x8ExtmulLowS: SIMD(0x9c),
  i16x8ExtmulHighS: SIMD(0x9d),
  i32x4ExtaddPairwiseS: SIMD(0x7e),
  i32x4RelaxedDotAdd: SIMD(0x113),
  i16x8RelaxedDot: SIMD(0x112),
};
export function sleb(v: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = v & 0x7f;
    v >>= 7;
    if ((v === 0 && !(b & 0x40)) || (v === -1 && b & 0x40)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

/** One exported function of a kernel module: its name, parameter and result types, and its body (locals and code). */
export interface KernelFunction {
  name: string;
  params: number[];
  results: number[];
  body: number[];
}

/**
 * The module every kernel is: it imports one memory (`env.memory`) and
 * exports its functions, each with a type of its own.
 */
export function kernelModule(fns: readonly KernelFunction[]): Uint8Array<ArrayBuffer> {
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, vec(fns.map((f) => [0x60, ...vec(f.params.map((t) => [t])), ...vec(f.results.map((t) => [t]))]))),
    ...section(2, vec([[...str("env"), ...str("memory"), 0x02, 0x00, ...uleb(1)]])),
    ...section(3, vec(fns.map((_, i) => uleb(i)))),
    ...section(7, vec(fns.map((f, i) => [...str(f.name), 0x00, ...uleb(i)]))),
    ...section(10, vec(fns.map((f) => [...uleb(f.body.length), ...f.body]))),
  ]);
}

/** The compiled module, or null where this runtime has no WebAssembly or rejects it (no SIMD, no relaxed SIMD). */
export function compileKernel(bytes: Uint8Array<ArrayBuffer>): WebAssembly.Module | null {
  return typeof WebAssembly === "object" && WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
}
