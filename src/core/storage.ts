import type { Services } from "./services";
import type { MemoriesStore } from "./memories";
import type { SearchStore } from "./search";
import type { RecallStore } from "./recall";
import type { GraphStore } from "./graph";
import type { IdentityStore } from "./identity";
import type { DistillStore } from "./distill";
import type { NightlyStore } from "./nightly";
import type { AnalyticsStore } from "./analytics";
import type { FeedbackStore } from "./memories";
import type { ReceiptStore } from "./receipts";
import type { TokensStore } from "./tokens";
import type { AuditStore } from "./audit";

/**
 * Everything core asks of a database, grouped by capability. One object per
 * engine: src/store/sqlite/ (the default, one embedded file) and
 * src/store/postgres/ (PostgreSQL with pgvector, for teams). No core file
 * holds engine-specific SQL; it lives in the engine's folder.
 */
export interface Storage {
  readonly engine: "sqlite" | "postgres";
  /** Where the data lives, safe to log: a file path, or a URL without its password. */
  readonly location: string;
  readonly memories: MemoriesStore;
  readonly search: SearchStore;
  readonly recall: RecallStore;
  readonly graph: GraphStore;
  readonly identity: IdentityStore;
  readonly distill: DistillStore;
  readonly nightly: NightlyStore;
  readonly analytics: AnalyticsStore;
  /** Feedback events on memories (wrong, outdated, useful, irrelevant; retire and review). */
  readonly feedback: FeedbackStore;
  /** What recall and agent searches gave the agent (issue 37). */
  readonly receipts: ReceiptStore;
  /** Members' tokens (hashes only): every server over the database authenticates against them. */
  readonly tokens: TokensStore;
  readonly audit: AuditStore;
  /**
   * The meta table: small named values several capabilities share
   * (schema_version, embedder_id, reembed_cursor, ...).
   */
  readonly meta: MetaStore;
  /** What /health reports about the database. */
  stats(): Promise<StorageStats>;
  /**
   * Resolves once the database is usable: at once for SQLite; on PostgreSQL
   * the first connect and migration (every store method awaits it too, so
   * calling it is only needed to fail fast, as `memsvc server` does).
   */
  ready(): Promise<void>;
  /**
   * Runs `fn` in one transaction: everything it writes through `tx` lands
   * together or not at all (an exception rolls back). Inside, `tx` is the
   * storage to use; `tx.transaction` joins the same transaction. Keep `fn` to
   * storage calls and computation: no network, no model, no embedding.
   */
  transaction<T>(fn: (tx: Storage) => Promise<T>): Promise<T>;
  /**
   * Inside `transaction(fn)`, on its `tx` only: runs `inner` under a
   * savepoint, so an exception rolls back what `inner` wrote and the
   * transaction goes on. Present on SQLite (ingest groups concurrent writes in
   * one transaction there: memories/group-commit.ts); absent on PostgreSQL,
   * whose writers each have a connection and a transaction of their own.
   */
  savepoint?<T>(inner: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * `s` with its storage replaced by an open transaction's `tx`: core functions
 * take Services, so one called inside `s.storage.transaction(async (tx) => ...)`
 * is handed `withStorage(s, tx)` and every write it makes joins the
 * transaction (on SQLite a write through `s.storage` there would wait for the
 * lock the transaction holds). Everything else is `s`'s own (prototype).
 */
export function withStorage(s: Services, tx: Storage): Services {
  // Per-server caches live in s.state, which the view inherits: they are the root's.
  return Object.create(s, { storage: { value: tx, enumerable: true } }) as Services;
}

export interface MetaStore {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
}

export interface StorageStats {
  memories: number;
  links: number;
  /** On-disk size of the store: the SQLite file and its WAL, or the schema's tables and indexes. */
  bytes: number;
}
