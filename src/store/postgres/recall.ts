import { and, asc, count, eq, gt, inArray, lt, lte, or, sql } from "drizzle-orm";
import type { RecallExpiry, RecallMemoryRow, RecallStore, RecallTurn } from "../../core/recall";
import type { PgHandle, PgOrm } from "./open";

/**
 * recall/ on PostgreSQL. Several servers answer one session: the turn is one
 * upsert (its row lock orders two prompts of a session), a pick is claimed by
 * a conditional upsert, never a read-then-write.
 */
export function pgRecall(h: PgHandle): RecallStore {
  const { recallSessions: rs, recallShown: shown, recallTopics: topics, memories: m, memoryEvents: ev } = h.t;
  type Db = PgOrm;
  // One transaction per method; inside storage.transaction the caller's.
  const inTx = <T>(fn: (db: Db) => Promise<T>): Promise<T> => (h.inTransaction ? fn(h.orm) : (h.sql.begin((tx) => fn(h.bind(tx).orm)) as Promise<T>));

  const expiredWhere = (e: RecallExpiry) => or(lt(rs.updatedAt, e.idleBefore), and(lte(rs.turn, 1), lt(rs.updatedAt, e.oneTurnIdleBefore)));

  async function expire(db: Db, e: RecallExpiry): Promise<number> {
    let dropped = (await db.delete(rs).where(expiredWhere(e)).returning({ id: rs.sessionId })).length;
    const [{ n }] = await db.select({ n: count() }).from(rs);
    const over = n - e.max;
    if (over > 0) {
      const oldest = db.select({ id: rs.sessionId }).from(rs).orderBy(asc(rs.updatedAt), asc(rs.sessionId)).limit(over);
      dropped += (await db.delete(rs).where(inArray(rs.sessionId, oldest)).returning({ id: rs.sessionId })).length;
    }
    return dropped;
  }

  async function advance(db: Db, sessionId: string, now: number, e: RecallExpiry): Promise<number> {
    const [{ turn }] = await db
      .insert(rs)
      .values({ sessionId, turn: 1, updatedAt: now })
      .onConflictDoUpdate({ target: rs.sessionId, set: { turn: sql`${rs.turn} + 1`, updatedAt: now } })
      .returning({ turn: rs.turn });
    if (turn === 1) await expire(db, e);
    return turn;
  }

  return {
    nextTurn: (sessionId, now, e) => inTx((db) => advance(db, sessionId, now, e)),

    beginTurn: (sessionId, now, window, e) =>
      inTx(async (tx): Promise<RecallTurn> => {
        const turn = await advance(tx, sessionId, now, e);
        const rows = await tx
          .select({ id: shown.memoryId })
          .from(shown)
          .where(and(eq(shown.sessionId, sessionId), gt(shown.turn, turn - window)));
        const [topic] = await tx.select({ topic: topics.topic }).from(topics).where(eq(topics.sessionId, sessionId));
        return { turn, suppressed: rows.map((r) => r.id), topic: topic?.topic ?? null };
      }),

    hasTopic: async (sessionId) => (await h.orm.select({ one: sql<number>`1` }).from(topics).where(eq(topics.sessionId, sessionId)).limit(1)).length > 0,

    finishTurn: (end) =>
      inTx(async (tx) => {
        await tx
          .insert(topics)
          .values({ sessionId: end.sessionId, topic: end.topic })
          .onConflictDoUpdate({ target: topics.sessionId, set: { topic: end.topic } });
        const picks = [...new Set(end.picks)];
        if (picks.length === 0) return [];
        // A pick another turn of the session showed within the window (a concurrent prompt) is not claimed.
        const rows = await tx
          .insert(shown)
          .values(picks.map((memoryId) => ({ sessionId: end.sessionId, memoryId, turn: end.turn })))
          .onConflictDoUpdate({ target: [shown.sessionId, shown.memoryId], set: { turn: end.turn }, setWhere: lte(shown.turn, end.turn - end.window) })
          .returning({ id: shown.memoryId });
        const claimed = new Set(rows.map((r) => r.id));
        const ids = picks.filter((id) => claimed.has(id));
        if (ids.length > 0) {
          await tx
            .update(m)
            .set({ shownCount: sql`${m.shownCount} + 1`, lastShownAt: end.now, refreshedAt: sql`greatest(${m.refreshedAt}, ${end.now})` })
            .where(inArray(m.id, ids));
          await tx.insert(ev).values(ids.map((memoryId) => ({ memoryId, kind: "shown", at: end.now })));
        }
        // Rows past the window only cost space: drop them while we are here.
        await tx.delete(shown).where(and(eq(shown.sessionId, end.sessionId), lte(shown.turn, end.turn - end.window)));
        return ids;
      }),

    resetSession: async (sessionId) => {
      // Shown rows and the topic go through the cascade.
      await h.orm.delete(rs).where(eq(rs.sessionId, sessionId));
    },

    expireSessions: async (e, dryRun) => {
      if (!dryRun) return inTx((db) => expire(db, e));
      const [{ expired }] = await h.orm.select({ expired: count() }).from(rs).where(expiredWhere(e));
      const [{ n }] = await h.orm.select({ n: count() }).from(rs);
      return expired + Math.max(0, n - expired - e.max);
    },

    candidateRows: async (seqs): Promise<RecallMemoryRow[]> => {
      if (seqs.length === 0) return [];
      return h.orm
        .select({ seq: m.seq, id: m.id, content: m.content, memoryType: m.memoryType, project: m.project, createdAt: m.createdAt, strength: m.strength, refreshedAt: m.refreshedAt })
        .from(m)
        .where(inArray(m.seq, [...seqs]));
    },
  };
}
