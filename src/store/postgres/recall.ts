import { and, asc, count, eq, inArray, lt, lte, or, sql } from "drizzle-orm";
import type { RecallExpiry, RecallMemoryRow, RecallStore, RecallTurn } from "../../core/recall";
import { reportingContention } from "./contention";
import type { PgHandle, PgOrm } from "./open";

/**
 * recall/ on PostgreSQL. Several servers answer one session: the turn is one
 * upsert (its row lock orders two prompts of a session), a pick is claimed by
 * a conditional upsert, never a read-then-write. The two per-prompt calls
 * (peekTurn, finishTurn) are one statement each, in raw SQL because drizzle
 * cannot chain data-modifying CTEs: one round trip each instead of a
 * transaction of five to seven. Expiry after a new session's first
 * turn is its own statements: a race there only drops a few more sessions.
 */
export function pgRecall(h: PgHandle): RecallStore {
  const { recallSessions: rs, recallTopics: topics } = h.t;
  type Db = PgOrm;
  const S = h.schema;
  // One transaction per method; inside storage.transaction the caller's.
  const inTx = <T>(fn: (db: Db) => Promise<T>): Promise<T> =>
    h.inTransaction ? fn(h.orm) : reportingContention(() => h.sql.begin((tx) => fn(h.bind(tx).orm)) as Promise<T>);

  const expiredWhere = (e: RecallExpiry) => or(lt(rs.updatedAt, e.idleBefore), and(lte(rs.turn, 1), lt(rs.updatedAt, e.oneTurnIdleBefore)));

  /**
   * One statement in the usual case (a round trip per new session): the
   * expired sessions go with their receipts, and the sessions that stay are
   * counted (the statement's snapshot still holds the deleted rows:
   * subtracted). Only past `max` does a second statement drop the oldest.
   */
  async function expire(db: Db, e: RecallExpiry): Promise<number> {
    const receiptsOf = (gone: string) => sql.raw(`DELETE FROM ${S}.recall_receipts WHERE session_id IN (SELECT session_id FROM ${gone})`);
    const [first] = (await db.execute(
      sql`WITH gone AS (DELETE FROM ${rs} WHERE ${expiredWhere(e)} RETURNING ${rs.sessionId}),
        receipts AS (${receiptsOf("gone")})
        SELECT (SELECT count(*) FROM ${rs})::int - (SELECT count(*) FROM gone)::int AS n, (SELECT count(*) FROM gone)::int AS gone`,
    )) as unknown as { n: number; gone: number }[];
    const over = Number(first.n) - e.max;
    if (over <= 0) return Number(first.gone);
    const oldest = db.select({ id: rs.sessionId }).from(rs).orderBy(asc(rs.updatedAt), asc(rs.sessionId)).limit(over);
    const [second] = (await db.execute(
      sql`WITH gone AS (DELETE FROM ${rs} WHERE ${inArray(rs.sessionId, oldest)} RETURNING ${rs.sessionId}),
        receipts AS (${receiptsOf("gone")})
        SELECT (SELECT count(*) FROM gone)::int AS gone`,
    )) as unknown as { gone: number }[];
    return Number(first.gone) + Number(second.gone);
  }

  // One upsert: two prompts of a session on two servers get distinct turns (the row lock orders them).
  async function advance(db: Db, sessionId: string, now: number): Promise<number> {
    const [{ turn }] = await db
      .insert(rs)
      .values({ sessionId, turn: 1, updatedAt: now })
      .onConflictDoUpdate({ target: rs.sessionId, set: { turn: sql`${rs.turn} + 1`, updatedAt: now } })
      .returning({ turn: rs.turn });
    return turn;
  }

  return {
    nextTurn: async (sessionId, now, e) => {
      const turn = await advance(h.orm, sessionId, now);
      if (turn === 1) await expire(h.orm, e);
      return turn;
    },

    peekTurn: async (sessionId, window) => {
      // One statement, one snapshot; nothing written: the turn is counted by finishTurn.
      const [row] = await h.sql.unsafe(
        `WITH t AS (SELECT coalesce((SELECT turn FROM ${S}.recall_sessions WHERE session_id = $1::text), 0) + 1 AS turn)
         SELECT t.turn,
           (SELECT coalesce(json_agg(memory_id), '[]'::json)::text FROM ${S}.recall_shown WHERE session_id = $1::text AND turn > t.turn - $2::int) AS suppressed,
           (SELECT topic FROM ${S}.recall_topics WHERE session_id = $1::text) AS topic
         FROM t`,
        [sessionId, window],
      );
      return { turn: Number(row.turn), suppressed: JSON.parse(row.suppressed) as string[], topic: (row.topic as string | null) ?? null } satisfies RecallTurn;
    },

    hasTopic: async (sessionId) => (await h.orm.select({ one: sql<number>`1` }).from(topics).where(eq(topics.sessionId, sessionId)).limit(1)).length > 0,

    finishTurn: async (end) => {
      const picks = [...new Set(end.picks)];
      // One statement (atomic by itself, one round trip). The turn upsert's row lock orders the session's
      // prompts, on this server or another; every other part reads its turn. A pick another turn of the
      // session showed within the window is not claimed: no update, no row returned; only claimed picks move
      // counters and get events. The clean-up names what this turn claimed as spared: sub-statements share
      // one snapshot, so it sees the old row (PostgreSQL would keep the update anyway; the query should not
      // depend on that). With no claimed pick the statement still returns the turn (the LEFT JOIN).
      const rows = await h.sql.unsafe(
        `WITH t AS (
           INSERT INTO ${S}.recall_sessions AS r (session_id, turn, updated_at) VALUES ($1::text, 1, $5::bigint)
           ON CONFLICT (session_id) DO UPDATE SET turn = r.turn + 1, updated_at = excluded.updated_at
           RETURNING turn),
         topic AS (
           INSERT INTO ${S}.recall_topics (session_id, topic) SELECT $1::text, $2::text FROM t
           ON CONFLICT (session_id) DO UPDATE SET topic = excluded.topic),
         claimed AS (
           INSERT INTO ${S}.recall_shown AS r (session_id, memory_id, turn)
             SELECT $1::text, value, t.turn FROM jsonb_array_elements_text($3::jsonb), t
           ON CONFLICT (session_id, memory_id) DO UPDATE SET turn = excluded.turn WHERE r.turn <= excluded.turn - $4::int
           RETURNING memory_id),
         counted AS (
           UPDATE ${S}.memories SET shown_count = shown_count + 1, last_shown_at = $5::bigint, refreshed_at = greatest(refreshed_at, $5::bigint)
           WHERE id IN (SELECT memory_id FROM claimed)),
         events AS (
           INSERT INTO ${S}.memory_events (memory_id, kind, at) SELECT memory_id, 'shown', $5::bigint FROM claimed),
         dropped AS (
           DELETE FROM ${S}.recall_shown WHERE session_id = $1::text AND turn <= (SELECT turn FROM t) - $4::int AND memory_id NOT IN (SELECT memory_id FROM claimed))
         SELECT t.turn, c.memory_id FROM t LEFT JOIN claimed c ON true`,
        [end.sessionId, end.topic, JSON.stringify(picks), end.window, end.now],
      );
      const list = rows as { turn: number | string; memory_id: string | null }[];
      const turn = Number(list[0].turn);
      // A new session expires old ones, as nextTurn does (its own statements: a race there only drops a few more sessions).
      if (turn === 1) await expire(h.orm, end.expiry);
      const claimed = new Set(list.map((r) => r.memory_id).filter((id): id is string => id !== null));
      return { turn, claimed: picks.filter((id) => claimed.has(id)) };
    },

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
      // Raw SQL on the prompt's path: drizzle's query building cost more JavaScript than the read.
      const rows = await h.sql.unsafe(
        `SELECT seq::float8 AS seq, id, content, memory_type AS "memoryType", project, created_at::float8 AS "createdAt", strength,
                refreshed_at::float8 AS "refreshedAt"
           FROM ${S}.memories WHERE seq = ANY($1::bigint[])`,
        [[...seqs]],
      );
      return [...rows] as RecallMemoryRow[];
    },
  };
}
