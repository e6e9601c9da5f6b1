import type { Config } from "../config";
import { openStore, getMeta, setMeta, type Store } from "../db";
import type { Embedder } from "../embed/types";
import type { Logger } from "./log";
import { recoverIdentity } from "./identity-write";
import { VectorIndex } from "./vector-index";

/** A model being fetched in the background while another embedder serves (see cli/server.ts). */
export interface EmbedderLoad {
  model: string;
  state: "downloading" | "failed";
  since: string;
  /** Why it failed, in one line (state "failed"). */
  error?: string;
}

/** Everything core functions need, built once per process and passed explicitly. */
export interface Services {
  readonly config: Config;
  readonly store: Store;
  /** Replaced once, by useEmbedder, when a downloaded model takes over from the fallback. */
  readonly embedder: Embedder;
  /** Replaced together with the embedder: it only ever holds vectors of the active embedder's space. */
  readonly index: VectorIndex;
  readonly log: Logger;
  /** Set while a model downloads in the background (or after that failed); null otherwise. */
  embedderLoad: EmbedderLoad | null;
  /**
   * Makes `next` the active embedder: new writes and queries use it at once;
   * after in-flight writes settle, the index restarts empty and the database
   * is marked for re-embedding (run runReembed afterwards to fill it).
   */
  useEmbedder(next: Embedder): Promise<void>;
  now(): number;
  /** Registers a write so shutdown can wait for it to finish. */
  track<T>(work: Promise<T>): Promise<T>;
  /** Resolves when every tracked write has settled. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

export interface ServiceOptions {
  embedder: Embedder;
  log: Logger;
  now?: () => number;
  /** Database file; defaults to the home's memsvc.db. */
  dbFile?: string;
}

export function createServices(config: Config, opts: ServiceOptions): Services {
  const store = openStore(opts.dbFile ?? config.paths.db);
  const index = new VectorIndex();
  const inflight = new Set<Promise<unknown>>();
  let embedder = opts.embedder;
  let index_ = index;
  const services: Services = {
    config,
    store,
    get embedder() {
      return embedder;
    },
    get index() {
      return index_;
    },
    log: opts.log,
    embedderLoad: null,
    async useEmbedder(next) {
      const previous = embedder;
      if (next === previous) return;
      embedder = next;
      // Writes that embedded with the previous model land before the re-embed cursor is set, so it covers them.
      await services.drain();
      index_ = new VectorIndex();
      loadIndex(services);
      await previous.close?.();
    },
    now: opts.now ?? Date.now,
    track(work) {
      inflight.add(work);
      const done = () => inflight.delete(work);
      work.then(done, done);
      return work;
    },
    async drain() {
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
    },
    async close() {
      await services.drain();
      await embedder.close?.();
      store.close();
    },
  };
  loadIndex(services);
  recoverIdentityFiles(services);
  return services;
}

/** Completes or undoes an identity PUT a crash interrupted, and removes its temp files. */
function recoverIdentityFiles(s: Services): void {
  try {
    const r = recoverIdentity(s.config.paths.identity, (m) => s.log("warn", m));
    if (r.rolledForward + r.rolledBack + r.removed > 0) {
      s.log("info", `identity: finished ${r.rolledForward} and undid ${r.rolledBack} interrupted write(s); removed ${r.removed} temp file(s)`);
    }
  } catch (e) {
    s.log("error", `identity: recovery of interrupted writes failed: ${(e as Error).message}`);
  }
}

/**
 * Fills the in-memory vector index from vec0, but only with vectors of the
 * active embedder's space: rows past a pending re-embed cursor are left out
 * (they are found by BM25 until the re-embed reaches them).
 */
function loadIndex(s: Services): void {
  const recorded = getMeta(s.store, "embedder_id");
  const cursorText = getMeta(s.store, "reembed_cursor");
  const count = s.store.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM memories").get()!.n;
  if (recorded === null || (count === 0 && recorded !== s.embedder.id)) {
    setMeta(s.store, "embedder_id", s.embedder.id);
  } else if (recorded !== s.embedder.id) {
    // A different vector space: start over; the re-embed job fills the index.
    s.store.sqlite.transaction(() => {
      setMeta(s.store, "embedder_id", s.embedder.id);
      setMeta(s.store, "reembed_cursor", "0");
    })();
    s.log("warn", `stored vectors came from ${recorded}; re-embedding them with ${s.embedder.id} in the background`);
    return;
  }
  const upTo = cursorText === null ? Number.MAX_SAFE_INTEGER : Number(cursorText);
  // Streamed row by row: materialising 100k vectors at once doubled the start-up peak RSS.
  const rows = s.store.sqlite
    .query<{ seq: number; embedding: Uint8Array; project: string | null }, [number]>(
      "SELECT v.rowid AS seq, v.embedding AS embedding, m.project AS project FROM memory_vec v JOIN memories m ON m.seq = v.rowid WHERE v.rowid <= ?",
    )
    .iterate(upTo);
  for (const r of rows) {
    s.index.upsert(r.seq, new Float32Array(r.embedding.buffer, r.embedding.byteOffset, r.embedding.byteLength / 4), r.project);
  }
}
