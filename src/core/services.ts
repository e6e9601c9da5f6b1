import type { Config } from "../config";
import { openStore, type Store } from "../store/sqlite";
import { sqliteStorage } from "../store/sqlite/storage";
import { openPostgres } from "../store/postgres/open";
import { pgStorage } from "../store/postgres/storage";
import type { Storage } from "./storage";
import type { Embedder } from "../embed/types";
import type { Logger } from "./log";
import { recoverIdentity } from "./identity";
import { lull, Traffic } from "./slices";
import { loadThresholds, type IndexState, type VectorMirror } from "./search";
import { counted } from "./text";
import { flushAudit } from "./audit";

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
  /**
   * The SQLite handle, while core moves to `storage` (issue 17): new code uses
   * `storage`. Under storage "postgres" reading it throws, so code that has
   * not moved fails loudly instead of writing to a stray SQLite file.
   */
  readonly store: Store;
  /** The database behind every capability, whatever the engine (src/core/storage.ts). */
  readonly storage: Storage;
  /** Replaced once, by useEmbedder, when a downloaded model takes over from the fallback. */
  readonly embedder: Embedder;
  /**
   * The storage engine's vector index as this process sees it (storage.search.vectorIndex.mirror): told of this
   * process's committed writes; restarted empty with the embedder, so it only holds the active space.
   * Searching goes through storage.search.nearest.
   */
  readonly index: VectorMirror;
  /** Loading or ready (what /health reports). */
  readonly indexState: IndexState;
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
  /** When requests arrive (the HTTP layer notes each): background work waits for lulls (slices.ts). */
  readonly traffic: Traffic;
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
  /** Database file (storage "sqlite"); defaults to the home's memsvc.db. */
  dbFile?: string;
  /** Vector count above which the index loads in the background and is saved to a file (tests lower it). */
  indexBackgroundAbove?: number;
  /** SQLite: checkpoint the WAL on a worker thread (the long-running server; src/store/sqlite/checkpointer.ts). */
  walCheckpointer?: boolean;
  /** SQLite: run search's full-text queries on a worker thread (the server; src/store/sqlite/fts-reader.ts). */
  ftsReader?: boolean;
}

export function createServices(config: Config, opts: ServiceOptions): Services {
  const postgres = config.storage === "postgres";
  const workers = { ...(opts.walCheckpointer ? { checkpointer: { log: opts.log } } : {}), ...(opts.ftsReader ? { ftsReader: { log: opts.log } } : {}) };
  const store = postgres ? null : openStore(opts.dbFile ?? config.paths.db, workers);
  // Lazy: nothing connects until the first query or storage.ready() (memsvc server awaits it to fail fast).
  const storage = store ? sqliteStorage(store) : pgStorage(openPostgres({ url: config.database.url!, schema: config.database.schema, pool: config.database.pool }));
  const inflight = new Set<Promise<unknown>>();
  let embedder = opts.embedder;
  // Set by attachIndex() right after the object exists.
  let state = undefined as unknown as IndexState;
  const services: Services = {
    config,
    get store(): Store {
      if (!store) throw new Error(`Services.store (the SQLite handle) does not exist under storage "postgres": the calling code has not moved to the storage interface yet (issue 17)`);
      return store;
    },
    storage,
    get embedder() {
      return embedder;
    },
    get index() {
      return storage.search.vectorIndex.mirror;
    },
    get indexState() {
      return state;
    },
    log: opts.log,
    embedderLoad: null,
    async useEmbedder(next) {
      const previous = embedder;
      if (next === previous) return;
      embedder = next;
      // Writes that embedded with the previous model land before the re-embed cursor is set, so it covers them.
      await services.drain();
      attachIndex();
      // The new space is recorded (and the re-embed cursor set) before callers run runReembed.
      await state.claimed;
      await previous.close?.();
    },
    now: opts.now ?? Date.now,
    traffic: new Traffic(),
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
      await flushAudit(services);
      await services.drain();
      await storage.search.vectorIndex.close();
      await embedder.close?.();
      await storage.close();
    },
  };
  attachIndex();
  recoverIdentityFiles(services);
  return services;

  /** A fresh index for the active embedder, loaded (or loading) by the engine; the embedder's thresholds read meanwhile. */
  function attachIndex(): void {
    state = storage.search.vectorIndex.start({ embedderId: embedder.id, log: opts.log, backgroundAbove: opts.indexBackgroundAbove, quiet: () => lull(services.traffic) });
    void loadThresholds(services);
  }
}

/** Completes or undoes an identity PUT a crash interrupted, and removes its temp files. */
function recoverIdentityFiles(s: Services): void {
  try {
    const r = recoverIdentity(s.config.paths.identity, (m) => s.log("warn", m));
    if (r.rolledForward + r.rolledBack + r.removed > 0) {
      s.log("info", `identity: finished ${r.rolledForward} and undid ${counted(r.rolledBack, "interrupted write")}; removed ${counted(r.removed, "temp file")}`);
    }
  } catch (e) {
    s.log("error", `identity: recovery of interrupted writes failed: ${(e as Error).message}`);
  }
}
