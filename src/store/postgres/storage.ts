import { eq } from "drizzle-orm";
import type { Storage } from "../../core/storage";
import type { PgHandle } from "./open";
import { reportingContention } from "./contention";
import { pgMemories } from "./memories";
import { pgMemoriesBulk } from "./memories-bulk";
import { pgSearch } from "./search";
import { pgRecall } from "./recall";
import { pgGraph } from "./graph";
import { pgIdentity } from "./identity";
import { pgDistill } from "./distill";
import { pgNightly } from "./nightly";
import { pgAnalytics } from "./analytics";
import { pgFeedback } from "./feedback";
import { pgReceipts } from "./receipts";
import { pgAudit, pgTokens } from "./tokens";

/**
 * The postgres engine behind every capability's store interface. The handle
 * connects lazily: every store method first awaits `h.ready()` (connect and
 * migrate, once), so the stores need not. Inside `transaction` the stores are
 * built on a handle bound to the transaction's connection; a nested
 * `transaction` joins the outer one.
 */
export function pgStorage(h: PgHandle): Storage {
  return build(h);

  function build(hh: PgHandle): Storage {
    // Inside a transaction ready() has run already.
    const g = <T extends object>(store: T): T => (hh.inTransaction ? store : gated(store, hh.ready));
    const self: Storage = {
      engine: "postgres",
      location: hh.location,
      memories: g({ ...pgMemories(hh), ...pgMemoriesBulk(hh) }),
      search: g(pgSearch(hh)),
      recall: g(pgRecall(hh)),
      graph: g(pgGraph(hh)),
      identity: g(pgIdentity(hh)),
      distill: g(pgDistill(hh)),
      nightly: g(pgNightly(hh)),
      analytics: g(pgAnalytics(hh)),
      feedback: g(pgFeedback(hh)),
      receipts: g(pgReceipts(hh)),
      tokens: g(pgTokens(hh)),
      audit: g(pgAudit(hh)),
      meta: g({
        async get(key: string) {
          const [row] = await hh.orm.select({ value: hh.t.meta.value }).from(hh.t.meta).where(eq(hh.t.meta.key, key));
          return row?.value ?? null;
        },
        async set(key: string, value: string) {
          await hh.orm.insert(hh.t.meta).values({ key, value }).onConflictDoUpdate({ target: hh.t.meta.key, set: { value } });
        },
      }),
      async stats() {
        await hh.ready();
        const [row] = await hh.sql.unsafe(
          `SELECT (SELECT count(*) FROM ${hh.schema}.memories)::float8 AS memories,
                  (SELECT count(*) FROM ${hh.schema}.links)::float8 AS links,
                  (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
                     JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = $1 AND c.relkind IN ('r', 'm'))::float8 AS bytes`,
          [hh.schema],
        );
        return { memories: row.memories, links: row.links, bytes: row.bytes };
      },
      ready: () => hh.ready(),
      async transaction(fn) {
        if (hh.inTransaction) return fn(self);
        await hh.ready();
        return (await reportingContention(() => hh.sql.begin((tx) => fn(build(hh.bind(tx)))))) as Awaited<ReturnType<typeof fn>>;
      },
      async close() {
        // A transaction's storage does not own the pool.
        if (!hh.inTransaction) await hh.close();
      },
    };
    return self;
  }
}

/** `store` with every method awaiting `ready` first (async generators are left alone: they await it themselves). */
function gated<T extends object>(store: T, ready: () => Promise<void>): T {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(store)) {
    if (typeof value !== "function" || value.constructor?.name === "AsyncGeneratorFunction") {
      out[name] = value;
      continue;
    }
    const fn = value as (...args: unknown[]) => unknown;
    out[name] = (...args: unknown[]) => ready().then(() => fn(...args));
  }
  return out as T;
}
