// The SQLite engine's vector index, as the rest of the engine (and its tests) use it: explicit named exports only.
export { quantize, VectorIndex } from "./vector-index";
export type { IndexSnapshot, VectorHit } from "./vector-index";
export { fromVec0, placedFromVec0, saveIndex, startIndex, syncIndex } from "./load";
export type { IndexContext, IndexState } from "./load";
export { KERNEL_DIMS, int8Kernel } from "./int8-kernel";
