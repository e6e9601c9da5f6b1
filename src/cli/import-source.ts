import { prepareStream, streamSource, type ImportKind, type PreparedChunk } from "../core/import";
import type { Logger } from "../core/log";
import type { ImportWorkerCredit, ImportWorkerInput, ImportWorkerMessage } from "./import-worker";

/** Chunks the worker may prepare ahead of the one being written: enough to keep both threads busy, few enough to bound memory. */
const AHEAD = 2;

/**
 * A folder source prepared in a worker thread (import-worker.ts) while this
 * thread writes: reading, splitting and redaction (~0.3 ms CPU an item, and
 * with the hashing embedder its vectors, ~0.09) overlap the batches'
 * transactions on the machine's other core. A worker that does not start is
 * one warning and the same work in this thread; one that fails later fails the
 * import (the batches written stay; a re-run skips them).
 */
export async function* preparedInWorker(
  input: Omit<ImportWorkerInput, "memsvcImportWorker" | "hashes" | "seqs"> & { existing: ReadonlyMap<bigint, number> },
  log: Logger,
): AsyncGenerator<PreparedChunk> {
  const { existing, ...rest } = input;
  const workerData: ImportWorkerInput = {
    memsvcImportWorker: true,
    ...rest,
    hashes: BigUint64Array.from(existing.keys()),
    seqs: Float64Array.from(existing.values()),
  };
  let worker: Worker;
  try {
    worker = new Worker(new URL("./import-worker.ts", import.meta.url), { workerData } as WorkerOptions);
  } catch (e) {
    log("warn", `import: no worker thread (${(e as Error).message}); reading in this thread`);
    return yield* inThread(input.kind, input.path, input.now, existing);
  }
  const queue: ImportWorkerMessage[] = [];
  let failure: string | null = null;
  let heard = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  worker.onmessage = (event: MessageEvent<ImportWorkerMessage>) => {
    heard = true;
    queue.push(event.data);
    poke();
  };
  worker.onerror = (event: ErrorEvent) => {
    event.preventDefault();
    failure ??= event.message;
    poke();
  };
  worker.addEventListener("close", () => {
    failure ??= "the worker thread exited";
    poke();
  });
  worker.postMessage({ more: AHEAD } satisfies ImportWorkerCredit);
  try {
    for (;;) {
      while (queue.length === 0 && failure === null) await new Promise<void>((r) => (wake = r));
      const m = queue.shift();
      if (!m) {
        if (heard) throw new Error(`import: the reading thread failed: ${failure}`);
        log("warn", `import: the worker thread did not start (${failure}); reading in this thread`);
        return yield* inThread(input.kind, input.path, input.now, existing);
      }
      if (m.type === "end") return;
      if (m.type === "error") throw new Error(`import: ${m.message}`);
      worker.postMessage({ more: 1 } satisfies ImportWorkerCredit);
      yield m.chunk;
    }
  } finally {
    worker.terminate();
  }
}

/** The same preparation in this thread (a worker that did not start). */
function inThread(kind: ImportKind, path: string, now: number, existing: ReadonlyMap<bigint, number>): AsyncGenerator<PreparedChunk> {
  return prepareStream(streamSource(kind, path, { now }), existing);
}
