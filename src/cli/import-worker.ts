import { parentPort, workerData } from "node:worker_threads";
import { prepareStream, streamSource, type ImportKind, type PreparedChunk } from "../core/import";
import { FallbackEmbedder } from "../embed/fallback";

/**
 * The thread that reads, splits, redacts and checks an import's source (and,
 * with the offline hashing embedder, embeds it) while the main thread writes
 * the batches before (import-source.ts starts it). It stays at most the
 * credit the main thread grants ahead, so memory holds a few chunks.
 * build.ts compiles it into the binary as an entrypoint of its own.
 */
export interface ImportWorkerInput {
  memsvcImportWorker: true;
  kind: ImportKind;
  path: string;
  now: number;
  /** The store's exact-duplicate keys and their seqs, read before the import writes. */
  hashes: BigUint64Array;
  seqs: Float64Array;
  embed: boolean;
}

export type ImportWorkerMessage = { type: "chunk"; chunk: PreparedChunk } | { type: "end" } | { type: "error"; message: string };

/** The main thread's answer to each chunk: one more may come. */
export interface ImportWorkerCredit {
  more: number;
}

const input = workerData as ImportWorkerInput | null;
if (parentPort && input?.memsvcImportWorker) {
  const port = parentPort;
  let credit = 0;
  let wake: (() => void) | null = null;
  port.on("message", (m: ImportWorkerCredit) => {
    credit += m.more;
    wake?.();
  });
  const run = async () => {
    const existing = new Map<bigint, number>();
    for (const [i, h] of input.hashes.entries()) existing.set(h, input.seqs[i]);
    const embedder = input.embed ? new FallbackEmbedder() : null;
    const chunks = prepareStream(
      streamSource(input.kind, input.path, { now: input.now }),
      existing,
      embedder ? (texts) => embedder.embed(texts, "document") : undefined,
    );
    for await (const chunk of chunks) {
      while (credit === 0) await new Promise<void>((r) => (wake = r));
      credit--;
      const transfer = chunk.items.flatMap((p) => (p.vector ? [p.vector.buffer as ArrayBuffer] : []));
      port.postMessage({ type: "chunk", chunk } satisfies ImportWorkerMessage, transfer);
    }
    port.postMessage({ type: "end" } satisfies ImportWorkerMessage);
  };
  run().catch((e: unknown) => port.postMessage({ type: "error", message: e instanceof Error ? e.message : String(e) } satisfies ImportWorkerMessage));
}
