import type { Database } from "bun:sqlite";
import type { Logger } from "../../core/log";
import { FTS_READER_CACHE_KIB } from "./tuning";
import * as workerModule from "./fts-reader-worker.ts" with { type: "text" };
import type { FtsReaderInput, FtsReaderMessage, FtsReaderRequest } from "./fts-reader-worker";

/**
 * search's bm25() query on a second connection, in a worker thread.
 *
 * A search runs two retrievers: FTS5 (SQLite, ~4-5 ms of a /search at 100k)
 * and the int8 vector scan (JavaScript and WebAssembly over the in-memory
 * index, ~3 ms). On one connection they ran one after the other on the only
 * JavaScript thread. Here the full-text query goes to this worker, the main
 * thread scans the vectors meanwhile, and a search takes the longer of the
 * two instead of their sum (bench figures in tuning.ts, FTS_READER_CACHE_KIB).
 * The main thread is also free for other requests while the query runs.
 *
 * The worker reads what is committed; a transaction's own reads (the tx
 * storage object) stay on the main connection, which sees its writes. A
 * worker that cannot start, fails or dies leaves every query to the main
 * connection, as before; a query it answers with an error is run again there.
 * Only the server starts one (openStore's `ftsReader` option).
 */
export interface FtsReader {
  /** "starting" until the worker opened its connection; "worker" while it answers; "off" for good. */
  readonly mode: "starting" | "worker" | "off";
  /**
   * The best `k` rowids of the FTS5 expression (within `project`), from the
   * worker; null when the worker is not answering, and the caller runs the
   * query itself.
   */
  query(expr: string, project: string | null, k: number): Promise<number[]> | null;
  /** Closes the worker's connection (waits for it, bounded) and ends the thread. */
  stop(): void;
  /** Tests: ends the worker abruptly, as a crash would. */
  kill(): void;
}

export interface FtsReaderOptions {
  log: Logger;
  /** Tests: what the worker must find as its SQLite library (a mismatch makes it refuse). */
  library?: { version: string; sourceId: string };
}

/** Longest stop() waits for the worker to close its connection (it is between two short queries at most). */
const STOP_WAIT_MS = 2000;

// Bun hands the file's text to a `with { type: "text" }` import; TypeScript sees the module.
const WORKER_SOURCE = (workerModule as unknown as { default: string }).default;

/** A query that failed in the worker for a reason of the worker's own: the caller runs it on the main connection. */
export class FtsReaderUnavailable extends Error {}

export function startFtsReader(sqlite: Database, file: string, sql: FtsReaderInput["sql"], opts: FtsReaderOptions): FtsReader {
  const { log } = opts;
  const control = new SharedArrayBuffer(4);
  const closed = new Int32Array(control);
  const library =
    opts.library ?? sqlite.query<{ version: string; sourceId: string }, []>("SELECT sqlite_version() AS version, sqlite_source_id() AS sourceId").get()!;
  const input: FtsReaderInput = { memsvcFtsReader: true, file, library, cacheKib: FTS_READER_CACHE_KIB, sql, control };
  const url = URL.createObjectURL(new File([WORKER_SOURCE], "fts-reader-worker.ts", { type: "text/typescript" }));
  // Unref'd and small, as the checkpointer's: it never keeps the process alive.
  const worker = new Worker(url, { workerData: input, ref: false, smol: true } as WorkerOptions);
  let mode: FtsReader["mode"] = "starting";
  let stopped = false;
  let exited = false;
  let next = 0;
  const pending = new Map<number, { resolve: (seqs: number[]) => void; reject: (e: Error) => void }>();

  const fallBack = (level: "warn" | "error", why: string) => {
    const was = mode;
    mode = "off";
    for (const p of pending.values()) p.reject(new FtsReaderUnavailable(why));
    pending.clear();
    if (was !== "off" && !stopped) log(level, `search: ${why}; full-text queries run on the main connection`);
  };

  worker.onmessage = (event: MessageEvent<FtsReaderMessage>) => {
    const m = event.data;
    URL.revokeObjectURL(url);
    if (m.type === "rows" || m.type === "error") {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.type === "rows") p.resolve(m.seqs);
      else p.reject(new FtsReaderUnavailable(m.message));
    } else if (m.type === "ready") {
      if (mode !== "starting" || stopped) return;
      mode = "worker";
      log("info", "search: a worker thread runs the full-text queries while this one scans the vectors");
    } else if (m.type === "refused") fallBack("warn", `the full-text reader did not start: ${m.reason}`);
    else fallBack("error", `the full-text reader failed: ${m.message}`);
  };
  worker.onerror = (event: ErrorEvent) => {
    event.preventDefault();
    fallBack("error", `the full-text reader crashed: ${event.message}`);
  };
  worker.addEventListener("close", () => {
    exited = true;
    if (!stopped) fallBack("error", "the full-text reader exited");
  });

  return {
    get mode() {
      return mode;
    },
    query(expr, project, k) {
      if (mode !== "worker") return null;
      const id = ++next;
      return new Promise<number[]>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, expr, project, k } satisfies FtsReaderRequest);
      });
    },
    stop() {
      if (stopped) return;
      stopped = true;
      fallBack("warn", "stopped");
      worker.postMessage({ stop: true } satisfies FtsReaderRequest);
      // A worker that is gone already has nothing open (its connection closes with the thread).
      if (!exited && Atomics.wait(closed, 0, 0, STOP_WAIT_MS) === "timed-out")
        log("warn", `search: the full-text reader did not close its connection within ${STOP_WAIT_MS / 1000} s`);
      worker.terminate();
      URL.revokeObjectURL(url);
    },
    kill() {
      worker.terminate();
    },
  };
}
