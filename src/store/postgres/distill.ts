import { asc, eq, inArray, sql } from "drizzle-orm";
import type { DistillStore } from "../../core/distill";
import type { PgHandle } from "./open";
import { reportingContention } from "./contention";

/** distill/ on PostgreSQL. */
export function pgDistill(h: PgHandle): DistillStore {
  const { orm, t } = h;
  return {
    async segmentCount(key) {
      const [row] = await orm.select({ n: t.segments.memoryCount }).from(t.segments).where(eq(t.segments.key, key));
      return row ? row.n : null;
    },
    async claimSegment(key, sessionId, at) {
      // The primary key decides. A concurrent transaction's uncommitted claim
      // makes this INSERT wait for it: after its commit nothing is inserted
      // (false), after its rollback this claim wins (true).
      const rows = await orm
        .insert(t.segments)
        .values({ key, sessionId, memoryCount: 0, createdAt: at })
        .onConflictDoNothing()
        .returning({ key: t.segments.key });
      return rows.length === 1;
    },
    async setSegmentCount(key, count) {
      await orm.update(t.segments).set({ memoryCount: count }).where(eq(t.segments.key, key));
    },
    async memoriesBySeq(seqs) {
      if (seqs.length === 0) return [];
      return orm
        .select({ seq: t.memories.seq, id: t.memories.id, content: t.memories.content, project: t.memories.project })
        .from(t.memories)
        .where(inArray(t.memories.seq, [...seqs]));
    },
    async idsWithPrefix(prefix, limit) {
      // starts_with, not a range on id: under a linguistic collation (en_US)
      // "-" sorts as if absent, so `id >= p AND id < p || '~'` can miss ids.
      // Rare path (an id the model named that it was not shown): no index needed.
      const rows = await orm
        .select({ id: t.memories.id })
        .from(t.memories)
        .where(sql`starts_with(${t.memories.id}, ${prefix})`)
        .orderBy(asc(t.memories.id))
        .limit(limit);
      return rows.map((r) => r.id);
    },
    async mergeTarget(id) {
      const [row] = await orm.select({ seq: t.memories.seq, strength: t.memories.strength }).from(t.memories).where(eq(t.memories.id, id));
      return row ?? null;
    },
    async strengthen(seq, strength, now) {
      await orm.update(t.memories).set({ strength, refreshedAt: now }).where(eq(t.memories.seq, seq));
    },
    async rewrite(seq, content, vector, strength, now) {
      const write = async (x: PgHandle) => {
        await x.orm.update(x.t.memories).set({ content, strength, refreshedAt: now, updatedAt: now }).where(eq(x.t.memories.seq, seq));
        await x.orm
          .update(x.t.memoryVec)
          .set({ embedding: Array.from(vector) })
          .where(eq(x.t.memoryVec.seq, seq));
      };
      if (h.inTransaction) return write(h);
      await reportingContention(() => h.sql.begin((tx) => write(h.bind(tx))));
    },
    async recordDropped(at, dropped) {
      if (dropped.length === 0) return;
      await orm.insert(t.distillDropped).values(dropped.map((d) => ({ at, reason: d.reason, content: d.content })));
    },
  };
}
