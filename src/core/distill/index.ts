// What other parts of memsvc use from distill/: explicit named exports only.
export { distill } from "./distill";
export { mergedContent } from "./store-segments";
export { substanceGate, substanceReason } from "./substance";
export type { DistillMemoryRow, DistillStore } from "./store";
