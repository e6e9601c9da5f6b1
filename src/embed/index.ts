export { DIMENSIONS, type Embedder } from "./types";
export { loadEmbedder, modelSource, type EmbedderOptions } from "./load";
export { OnnxEmbedder } from "./onnx";
export { FallbackEmbedder } from "./fallback";
