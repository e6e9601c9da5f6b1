import { hostname } from "node:os";
import type { Config } from "../config";
import type { Storage } from "./storage";
import type { Embedder } from "../embed/types";
import { createLlmClient, type LlmClient } from "../llm/client";
import type { Logger } from "./log";
import { recoverIdentity } from "./identity";
import { lull, Traffic } from "./slices";
import { loadThresholds, type IndexState, type Thresholds, type VectorMirror } from "./search";
import type { DomainIndex } from "./analytics";
import type { FeedbackMarksCache } from "./memories";
import type { ReceiptWriter } from "./receipts";
import type { GroupCommit } from "./memories/group-commit";
import { counted } from "./text";
import { flushAudit, type AuditLog } from "./audit";

/** A model being fetched in the background while another embedder serves (see cli/server.ts). */
export interface EmbedderLoad {
  model: string;
  state: "downloading" | "failed";
  since: string;
  /** Why it failed, in one line (state "failed"). */
  error?: string;
}

/**
 * What the capabilities keep per server, beside the database: caches and
 * locks. One object per Services, made by createServices; a withStorage view
 * (a transaction) inherits its root's, so a cache is never missed for being
 * read inside a transaction.
 */
export interface ServiceState {
  /** The server's own Services, outside any transaction: reads that may outlive a transaction go through it. */
  readonly root: Services;
  /** search/calibration.ts: the thresholds in force, and the read of them under way. */
  thresholds: Thresholds | null;
  thresholdsLoading: { embedderId: string; done: Promise<Thresholds> } | null;
  /** analytics/domains.ts: the last domain index, reused while the store looks unchanged. */
  domainIndex: { at: number; fingerprint: string; index: DomainIndex } | null;
  /** distill/distill.ts: one distill at a time per dedup key on this server. */
  readonly distillLocks: Map<string, Promise<void>>;
  /** nightly/nightly.ts: this server's name as a run owner ("host:pid:tag"). */
  readonly nightlyOwner: string;
  /** memories/feedback-marks.ts: the feedback marks in force (recall and search read them on every query). */
  feedbackMarks: FeedbackMarksCache | null;
  /** receipts/writer.ts: receipts waiting to be written in a batch. */
  receiptWriter: ReceiptWriter | null;
  /** audit/server-log.ts: the batching audit writer, made on the first entry. */
  audit: AuditLog | null;
  /** memories/group-commit.ts: the concurrent writes sharing the next transaction (engines with savepoints). */
  groupCommit: GroupCommit | null;
  /**
   * Shut-down hooks of what an edge opened for this server (the MCP transports' sessions: mcp/registry.ts),
   * by name; core does not know their types. The server's shutdown awaits each.
   */
  readonly edges: Map<string, { close(): Promise<void> }>;
}

/** Everything core functions need, built once per process and passed explicitly. */
export interface Services {
  readonly config: Config;
  /** The database behind every capability, whatever the engine (src/core/storage.ts; opened by src/store/open.ts). */
  readonly storage: Storage;
  /** The language model (config llm), built once: it keeps its connection pool; null when none is configured. */
  readonly llm: LlmClient | null;
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
  /** Per-server caches and locks of the capabilities (not module globals: two servers in one process stay apart). */
  readonly state: ServiceState;
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
  /** Vector count above which the index loads in the background and is saved to a file (tests lower it). */
  indexBackgroundAbove?: number;
}

/**
 * Services over `storage` (from openStorage, src/store/open.ts), which they
 * own from here on: close() closes it.
 */
export function createServices(config: Config, storage: Storage, opts: ServiceOptions): Services {
  const inflight = new Set<Promise<unknown>>();
  // Set right after the object exists (it names it as root).
  let state_ = undefined as unknown as ServiceState;
  let embedder = opts.embedder;
  // Set by attachIndex() right after the object exists.
  let state = undefined as unknown as IndexState;
  const services: Services = {
    config,
    storage,
    llm: createLlmClient(config.llm, config.paths.state),
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
    get state() {
      return state_;
    },
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
  state_ = {
    root: services,
    thresholds: null,
    thresholdsLoading: null,
    domainIndex: null,
    distillLocks: new Map(),
    nightlyOwner: `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`,
    feedbackMarks: null,
    receiptWriter: null,
    audit: null,
    groupCommit: null,
    edges: new Map(),
  };
  attachIndex();
  recoverIdentityFiles(services);
  return services;

  /** A fresh index for the active embedder, loaded (or loading) by the engine; the embedder's thresholds read meanwhile. */
  function attachIndex(): void {
    state = storage.search.vectorIndex.start({
      embedderId: embedder.id,
      log: opts.log,
      backgroundAbove: opts.indexBackgroundAbove,
      quiet: () => lull(services.traffic),
    });
    void loadThresholds(services);
  }
}

/** Completes or undoes an identity PUT a crash interrupted, and removes its temp files. */
function recoverIdentityFiles(s: Services): void {
  try {
    const r = recoverIdentity(s.config.paths.identity, (m) => s.log("warn", m));
    if (r.rolledForward + r.rolledBack + r.removed > 0) {
      s.log(
        "info",
        `identity: finished ${r.rolledForward} and undid ${counted(r.rolledBack, "interrupted write")}; removed ${counted(r.removed, "temp file")}`,
      );
    }
  } catch (e) {
    s.log("error", `identity: recovery of interrupted writes failed: ${(e as Error).message}`);
  }
}
