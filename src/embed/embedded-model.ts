/** A model folder compiled into the binary. */
export interface EmbeddedModel {
  /** Model id, e.g. "Xenova/bge-small-en-v1.5". */
  name: string;
  /** Path inside the model folder ("onnx/model_quantized.onnx") -> embedded file path (/$bunfs/...). */
  files: Record<string, string>;
}

/**
 * Nothing is embedded when running from source. build.ts swaps this module's
 * source for generated `import ... with { type: "file" }` lines when
 * MEMSVC_EMBED_MODEL_DIR is set, which is what makes Bun embed the files.
 */
export const embeddedModel: EmbeddedModel | null = null;
