import type { Config } from "../config";
import { openStore, type Store } from "../db";
import type { Embedder } from "../embed/types";
import type { Logger } from "./log";
import { saveIndex, startIndex, syncIndex, type IndexState } from "./index-sync";
import { VectorIndex } from "./vector-index";

/** Everything core functions need, built once per process and passed explicitly. */
export interface Services {
  readonly config: Config;
  readonly store: Store;
  readonly embedder: Embedder;
  readonly index: VectorIndex;
  /** Loading or ready; kept in step with other processes' writes before each vector search. */
  readonly indexState: IndexState;
  readonly log: Logger;
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
  /** Vector count above which the index loads in the background and is saved to a file (tests lower it). */
  indexBackgroundAbove?: number;
}

export function createServices(config: Config, opts: ServiceOptions): Services {
  const store = openStore(opts.dbFile ?? config.paths.db);
  const index = new VectorIndex();
  const inflight = new Set<Promise<unknown>>();
  const services: Services = {
    config,
    store,
    embedder: opts.embedder,
    index,
    indexState: undefined as unknown as IndexState,
    log: opts.log,
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
      saveIndex(services, services.indexState);
      services.indexState.stop = true;
      await opts.embedder.close?.();
      store.close();
    },
  };
  const state = startIndex(services, opts.indexBackgroundAbove);
  (services as { indexState: IndexState }).indexState = state;
  index.beforeSearch = () => {
    if (state.status === "ready") syncIndex(services, state);
  };
  return services;
}
