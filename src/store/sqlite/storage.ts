import { statSync } from "node:fs";
import type { Storage } from "../../core/storage";
import { getMeta, setMeta, type Store } from "./open";
import { WriteLock } from "./write-lock";
import { sqliteMemories } from "./memories";
import { sqliteMemoriesBulk } from "./memories-bulk";
import { sqliteSearch } from "./search";
import { sqliteRecall } from "./recall";
import { sqliteGraph } from "./graph";
import { sqliteIdentity } from "./identity";
import { sqliteDistill } from "./distill";
import { sqliteNightly } from "./nightly";
import { sqliteAnalytics } from "./analytics";
import { sqliteFeedback } from "./feedback";
import { sqliteReceipts } from "./receipts";
import { sqliteAudit, sqliteTokens } from "./tokens";
import { LINK_COUNT_SQL, MEMORY_COUNT_SQL } from "./row-counts";

/**
 * What each capability's SQLite store works with: the connection, and `write`,
 * which every write goes through (see write-lock.ts). Inside a transaction
 * `write` runs at once: the transaction holds the lock.
 */
export interface SqliteHandle extends Store {
  write<T>(fn: () => T): Promise<T>;
  readonly inTransaction: boolean;
}

/** The sqlite engine behind every capability's store interface. */
export function sqliteStorage(store: Store): Storage {
  const lock = new WriteLock(store.checkpointer?.gate ?? null);
  const outside: SqliteHandle = {
    ...store,
    sqlite: store.sqlite,
    orm: store.orm,
    file: store.file,
    close: () => store.close(),
    write: (fn) => lock.hold(fn),
    inTransaction: false,
  };
  const inside: SqliteHandle = { ...outside, write: async (fn) => fn(), inTransaction: true };
  let savepoints = 0;
  const txStorage = build(inside, null);
  return build(outside, lock);

  function build(h: SqliteHandle, lock: WriteLock | null): Storage {
    const self: Storage = {
      engine: "sqlite",
      location: h.file,
      memories: { ...sqliteMemories(h), ...sqliteMemoriesBulk(h) },
      search: sqliteSearch(h),
      recall: sqliteRecall(h),
      graph: sqliteGraph(h),
      identity: sqliteIdentity(h),
      distill: sqliteDistill(h),
      nightly: sqliteNightly(h),
      analytics: sqliteAnalytics(h),
      feedback: sqliteFeedback(h),
      receipts: sqliteReceipts(h),
      tokens: sqliteTokens(h),
      audit: sqliteAudit(h),
      meta: {
        async get(key) {
          return getMeta(h, key);
        },
        async set(key, value) {
          await h.write(() => setMeta(h, key, value));
        },
      },
      async stats() {
        // Kept by trigger (migration 0015): count(*) read a whole index per table, 7-90 ms at 100k.
        const counts = h.sqlite.query<{ m: number; l: number }, []>(`SELECT ${MEMORY_COUNT_SQL} AS m, ${LINK_COUNT_SQL} AS l`).get()!;
        let bytes = 0;
        for (const suffix of ["", "-wal"]) {
          try {
            bytes += statSync(h.file + suffix).size;
          } catch {
            /* no WAL yet, or :memory: */
          }
        }
        return { memories: counts.m, links: counts.l, bytes };
      },
      async ready() {},
      async transaction(fn) {
        if (!lock) return fn(self);
        return lock.hold(async () => {
          store.sqlite.run("BEGIN IMMEDIATE");
          try {
            const out = await fn(txStorage);
            store.sqlite.run("COMMIT");
            return out;
          } catch (e) {
            if (store.sqlite.inTransaction) store.sqlite.run("ROLLBACK");
            throw e;
          }
        });
      },
      async savepoint(inner) {
        if (lock || !store.sqlite.inTransaction) throw new Error("savepoint() runs only on a transaction's tx");
        const name = `sp${++savepoints}`;
        store.sqlite.run(`SAVEPOINT ${name}`);
        try {
          const out = await inner();
          store.sqlite.run(`RELEASE ${name}`);
          return out;
        } catch (e) {
          if (store.sqlite.inTransaction) {
            store.sqlite.run(`ROLLBACK TO ${name}`);
            store.sqlite.run(`RELEASE ${name}`);
          }
          throw e;
        }
      },
      async close() {
        h.close();
      },
    };
    return self;
  }
}
