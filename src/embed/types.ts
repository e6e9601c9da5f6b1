/** Every stored vector has this many dimensions; the vec0 table is declared with it. */
export const DIMENSIONS = 384;

/**
 * "query" texts get the model's retrieval instruction (bge models are trained
 * with it); "document" texts are embedded as they are.
 */
export type EmbedKind = "query" | "document";

export interface Embedder {
  /** Stable identity of the vector space, recorded in the database meta table. */
  readonly id: string;
  /** "onnx" for a real model, "fallback" for the offline hashing embedder. */
  readonly kind: "onnx" | "fallback";
  /** Human description for /health and `memsvc status`. */
  readonly description: string;
  /** Unit-length vectors of DIMENSIONS floats, one per text, in order. */
  embed(texts: string[], kind: EmbedKind): Promise<Float32Array[]>;
  /**
   * A query vector whose words count by `weightOf(stem)`: only embedders
   * whose vector is a sum of word features (the hashing fallback) have it;
   * a model's vector is not, so search embeds the query as it is.
   */
  embedWeighted?(text: string, weightOf: (stem: string) => number): Float32Array;
  close?(): Promise<void>;
}
