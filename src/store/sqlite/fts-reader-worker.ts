import { Database } from "bun:sqlite";
import { isMainThread, parentPort, workerData } from "node:worker_threads";

/**
 * The full-text reader's thread (see fts-reader.ts for the main side): a
 * read-only connection of its own that runs search's bm25() queries while
 * the main thread scores the vector index.
 *
 * Like checkpointer-worker.ts it runs from its own text (a blob URL), from
 * source and inside the compiled binary alike, so it imports nothing but
 * built-in modules; the SQL it runs comes in its input (search-fts.ts holds
 * it, for both connections).
 */

export interface FtsReaderInput {
  memsvcFtsReader: true;
  file: string;
  /** sqlite_version() and sqlite_source_id() of the main thread's connection: the worker must run the same library. */
  library: { version: string; sourceId: string };
  cacheKib: number;
  /** The two statements of search-fts.ts's bm25Statements: (expression, k) and (expression, project, k). */
  sql: { all: string; inProject: string };
  /** Int32 slot 0: the worker sets 1 once its connection is closed (or was never opened) and it will not touch the file again. */
  control: SharedArrayBuffer;
}

export interface FtsQuery {
  id: number;
  expr: string;
  project: string | null;
  k: number;
}

/** What the main thread sends: a query, or the word to close. */
export type FtsReaderRequest = FtsQuery | { stop: true };

export type FtsReaderMessage =
  | { type: "ready" }
  | { type: "refused"; reason: string }
  | { type: "failed"; message: string }
  | { type: "rows"; id: number; seqs: number[] }
  | { type: "error"; id: number; message: string };

export function runFtsReader(input: FtsReaderInput, post: (m: FtsReaderMessage) => void, listen: (on: (r: FtsReaderRequest) => void) => void): void {
  const control = new Int32Array(input.control);
  let db: Database | null = null;
  const close = () => {
    db?.close();
    db = null;
    Atomics.store(control, 0, 1);
    Atomics.notify(control, 0);
  };
  try {
    // Two copies of SQLite in one process over one file break each other's POSIX locks (checkpointer-worker.ts).
    const probe = new Database(":memory:");
    const library = probe.query<{ version: string; sourceId: string }, []>("SELECT sqlite_version() AS version, sqlite_source_id() AS sourceId").get()!;
    probe.close();
    if (library.version !== input.library.version || library.sourceId !== input.library.sourceId) {
      post({
        type: "refused",
        reason: `the worker's SQLite is ${library.version} (${library.sourceId}), the main thread's ${input.library.version} (${input.library.sourceId})`,
      });
      close();
      return;
    }
    // Read-write open, then query_only: a read-only open of a WAL database needs its -shm writable anyway.
    db = new Database(input.file, { readwrite: true, create: false, strict: true });
    db.run("PRAGMA busy_timeout = 5000");
    db.run("PRAGMA query_only = 1");
    db.run(`PRAGMA cache_size = -${input.cacheKib}`);
    const all = db.query<{ seq: number }, [string, number]>(input.sql.all);
    const inProject = db.query<{ seq: number }, [string, string, number]>(input.sql.inProject);
    listen((q) => {
      if ("stop" in q) return close();
      try {
        if (!db) throw new Error("the full-text reader is closed");
        const rows = q.project === null ? all.all(q.expr, q.k) : inProject.all(q.expr, q.project, q.k);
        post({ type: "rows", id: q.id, seqs: rows.map((r) => r.seq) });
      } catch (e) {
        post({ type: "error", id: q.id, message: (e as Error).message });
      }
    });
    post({ type: "ready" });
  } catch (e) {
    close();
    post({ type: "failed", message: (e as Error).message });
  }
}

if (!isMainThread && (workerData as FtsReaderInput | null)?.memsvcFtsReader) {
  runFtsReader(
    workerData as FtsReaderInput,
    (m) => parentPort!.postMessage(m),
    (on) => parentPort!.on("message", on),
  );
}
