// The SQLite engine's vector index, as the rest of the engine (and its tests) use it: explicit named exports only.
export { VectorIndex } from "./vector-index";
export { saveIndex, startIndex, syncIndex } from "./load";
export type { IndexContext, IndexState } from "./load";
export { KERNEL_DIMS, int8Kernel } from "./int8-kernel";
