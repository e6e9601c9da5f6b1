export { DIMENSIONS, type EmbedKind, type Embedder } from "./types";
export { loadEmbedder, modelSource, type EmbedderOptions, type ModelSource } from "./load";
export { OnnxEmbedder, QUERY_INSTRUCTION } from "./onnx";
export { FallbackEmbedder } from "./fallback";
