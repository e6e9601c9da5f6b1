import type { FeatureExtractionPipeline, ProgressInfo, Tensor } from "@huggingface/transformers";
import { prepareOnnxRuntime } from "./ort-native";
import { DIMENSIONS, type EmbedKind, type Embedder } from "./types";

/** bge models were trained with this instruction in front of queries (not documents). */
export const QUERY_INSTRUCTION = "Represent this sentence for searching relevant passages: ";

/** Big enough to amortise a session run, small enough that one batch stays well under 100 ms on 2 cores. */
const BATCH_SIZE = 16;

/** BERT-family position tables end at 512; used when the tokenizer config names no limit. */
const DEFAULT_MAX_TOKENS = 512;

/**
 * 512 tokens of prose are ~3 KB of text, so this cut never changes a vector
 * for real input; it only bounds tokenizer time on a pasted megabyte of logs.
 */
const MAX_CHARS = 32_000;

/** A hub that accepts the connection but never answers must not hang startup forever. */
const HUB_RESPONSE_TIMEOUT_MS = 30_000;

export interface OnnxLoadOptions {
  /** Model id such as "Xenova/bge-small-en-v1.5"; the files live in `<modelsDir>/<model>/`. */
  model: string;
  /** Folder holding one subfolder per model; downloads are written here too. */
  modelsDir: string;
  /** Fetch missing files from the model hub into `modelsDir`; false means disk only. */
  allowDownload: boolean;
  /** Hub base URL (a mirror, or a local server in tests); default https://huggingface.co/. */
  hubUrl?: string;
  /** Download progress; only called while files are fetched. */
  onProgress?: (info: ProgressInfo) => void;
}

/** Real sentence embeddings: a bge-style encoder run by onnxruntime through transformers.js. */
export class OnnxEmbedder implements Embedder {
  readonly kind = "onnx" as const;
  readonly id: string;
  readonly description: string;

  private constructor(
    readonly model: string,
    private readonly extractor: FeatureExtractionPipeline,
    private readonly maxTokens: number,
  ) {
    this.id = `onnx:${model}:q8`;
    this.description = `ONNX ${model} (q8, ${DIMENSIONS}d)`;
  }

  /**
   * Loads the model and runs one probe text through it, so a broken or
   * wrong-sized model fails here, at startup, instead of on the first write.
   */
  static async load(opts: OnnxLoadOptions): Promise<OnnxEmbedder> {
    // Telemetry off and the native runtime in place before transformers.js pulls in onnxruntime-node.
    prepareOnnxRuntime();
    const { env, pipeline } = await import("@huggingface/transformers");
    env.allowLocalModels = true;
    env.localModelPath = opts.modelsDir;
    env.allowRemoteModels = opts.allowDownload;
    // Downloads are cached as `<cacheDir>/<model>/<file>`, the same layout as
    // localModelPath, so a downloaded model is simply "on disk" next time.
    env.useFSCache = true;
    env.cacheDir = opts.modelsDir;
    env.useBrowserCache = false;
    env.remoteHost = withTrailingSlash(opts.hubUrl ?? "https://huggingface.co/");
    env.fetch = fetchWithTimeout;

    const extractor = await pipeline("feature-extraction", opts.model, {
      dtype: "q8",
      local_files_only: !opts.allowDownload,
      progress_callback: opts.onProgress,
    });
    const embedder = new OnnxEmbedder(opts.model, extractor, maxTokensOf(extractor));
    try {
      await embedder.embed(["dimension check"], "document");
    } catch (error) {
      await extractor.dispose();
      throw error;
    }
    return embedder;
  }

  async embed(texts: string[], kind: EmbedKind): Promise<Float32Array[]> {
    const prefix = kind === "query" ? QUERY_INSTRUCTION : "";
    const inputs = texts.map((text) => prefix + text.slice(0, MAX_CHARS));
    // Similar lengths in one batch means less padding to compute.
    const order = inputs.map((_, i) => i).sort((a, b) => inputs[a]!.length - inputs[b]!.length);
    const vectors = new Array<Float32Array>(texts.length);
    for (let start = 0; start < order.length; start += BATCH_SIZE) {
      // One batch of a big import must not starve HTTP requests waiting behind it.
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      const batch = order.slice(start, start + BATCH_SIZE);
      const rows = await this.embedBatch(batch.map((i) => inputs[i]!));
      batch.forEach((textIndex, row) => {
        vectors[textIndex] = rows[row]!;
      });
    }
    return vectors;
  }

  async close(): Promise<void> {
    await this.extractor.dispose();
  }

  /** What the pipeline's own call does (CLS pooling, L2 norm), plus an explicit token limit. */
  private async embedBatch(texts: string[]): Promise<Float32Array[]> {
    const encoded = this.extractor.tokenizer(texts, { padding: true, truncation: true, max_length: this.maxTokens });
    const output = (await this.extractor.model(encoded)) as { last_hidden_state?: Tensor };
    const hidden = output.last_hidden_state;
    if (!hidden) throw new Error(`model ${this.model} has no last_hidden_state output; memsvc needs a BERT-style encoder`);
    const width = hidden.dims.at(-1);
    if (width !== DIMENSIONS) {
      throw new Error(`model ${this.model} produces ${width}-dimensional vectors; memsvc stores ${DIMENSIONS}-dimensional ones`);
    }
    const pooled = hidden.slice(null, 0).normalize(2, -1);
    const data = pooled.data as Float32Array;
    return texts.map((_, row) => data.slice(row * DIMENSIONS, (row + 1) * DIMENSIONS));
  }
}

function maxTokensOf(extractor: FeatureExtractionPipeline): number {
  const fromTokenizer = extractor.tokenizer.model_max_length;
  const fromConfig = (extractor.model.config as { max_position_embeddings?: number }).max_position_embeddings;
  // Some exported tokenizers carry a placeholder of 1e30 instead of the real limit.
  const limits = [fromTokenizer, fromConfig].filter((n): n is number => typeof n === "number" && Number.isFinite(n) && n > 0 && n < 1e6);
  return limits.length > 0 ? Math.min(...limits) : DEFAULT_MAX_TOKENS;
}

function withTrailingSlash(url: string): string {
  return url.endsWith("/") ? url : `${url}/`;
}

/** Bounds the wait for response headers only; a slow but moving download may take as long as it needs. */
async function fetchWithTimeout(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`no answer from ${String(input)} within ${HUB_RESPONSE_TIMEOUT_MS / 1000} s`)),
    HUB_RESPONSE_TIMEOUT_MS,
  );
  try {
    return await fetch(input, { ...init, signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}
