import type { SQLQueryBindings, Statement } from "bun:sqlite";
import type { RecallExpiry, RecallMemoryRow, RecallStore, RecallTurn, RecallTurnEnd } from "../../core/recall";
import { transact } from "./open";
import type { SqliteHandle } from "./storage";

/**
 * recall/ on SQLite. /recall-index runs on every prompt of every agent, so
 * each statement is compiled once per handle (first use) and each method is
 * one synchronous transaction inside the write lock (through transact():
 * no transaction wrapper built per call). A prompt reads its session once
 * (peekTurn) and writes once (finishTurn): one commit per prompt.
 */
export function sqliteRecall(h: SqliteHandle): RecallStore {
  const db = h.sqlite;
  const cache = new Map<string, Statement>();
  // Compiled on first use: a handle that never serves recall compiles nothing.
  const q = <R, P extends SQLQueryBindings[]>(sql: string): Statement<R, P> => {
    let st = cache.get(sql);
    if (!st) cache.set(sql, (st = db.prepare(sql)));
    return st as unknown as Statement<R, P>;
  };

  const EXPIRED = "updated_at < :idle OR (turn <= 1 AND updated_at < :oneTurn)";
  const expiryParams = (e: RecallExpiry) => ({ idle: e.idleBefore, oneTurn: e.oneTurnIdleBefore });
  const count = () => q<{ n: number }, []>("SELECT count(*) AS n FROM recall_sessions").get()!.n;

  function expire(e: RecallExpiry): number {
    const gone = q<{ id: string }, [{ idle: number; oneTurn: number }]>(`DELETE FROM recall_sessions WHERE ${EXPIRED} RETURNING session_id AS id`).all(
      expiryParams(e),
    );
    const over = count() - e.max;
    if (over > 0) {
      gone.push(
        ...q<{ id: string }, [number]>(
          "DELETE FROM recall_sessions WHERE session_id IN (SELECT session_id FROM recall_sessions ORDER BY updated_at, session_id LIMIT ?) RETURNING session_id AS id",
        ).all(over),
      );
    }
    // Receipts go with their session's state.
    if (gone.length)
      q<unknown, [string]>("DELETE FROM recall_receipts WHERE session_id IN (SELECT value FROM json_each(?))").run(JSON.stringify(gone.map((g) => g.id)));
    return gone.length;
  }

  // A new session is when old ones are expired: the table only grows then, so it stays bounded without a timer.
  function advance(sessionId: string, now: number, e: RecallExpiry): number {
    const turn = q<{ turn: number }, [string, number]>(
      `INSERT INTO recall_sessions(session_id, turn, updated_at) VALUES (?1, 1, ?2)
       ON CONFLICT(session_id) DO UPDATE SET turn = turn + 1, updated_at = ?2 RETURNING turn`,
    ).get(sessionId, now)!.turn;
    if (turn === 1) expire(e);
    return turn;
  }

  return {
    nextTurn: (sessionId, now, e) => h.write(() => transact(db, () => advance(sessionId, now, e))),

    // Outside the write lock and any transaction: one statement reads one snapshot.
    peekTurn: async (sessionId, window): Promise<RecallTurn> => {
      const row = q<{ turn: number; suppressed: string; topic: string | null }, [string, number]>(
        `WITH t AS (SELECT coalesce((SELECT turn FROM recall_sessions WHERE session_id = ?1), 0) + 1 AS turn)
         SELECT t.turn,
           (SELECT json_group_array(memory_id) FROM recall_shown WHERE session_id = ?1 AND turn > t.turn - ?2) AS suppressed,
           (SELECT topic FROM recall_topics WHERE session_id = ?1) AS topic
         FROM t`,
      ).get(sessionId, window)!;
      return { turn: row.turn, suppressed: JSON.parse(row.suppressed) as string[], topic: row.topic };
    },

    hasTopic: async (sessionId) => q<{ n: number }, [string]>("SELECT count(*) AS n FROM recall_topics WHERE session_id = ?").get(sessionId)!.n > 0,

    finishTurn: (end: RecallTurnEnd) =>
      h.write(() =>
        transact(db, (): { turn: number; claimed: string[] } => {
          const turn = advance(end.sessionId, end.now, end.expiry);
          q<unknown, [string, string]>(
            "INSERT INTO recall_topics(session_id, topic) VALUES (?1, ?2) ON CONFLICT(session_id) DO UPDATE SET topic = excluded.topic",
          ).run(end.sessionId, end.topic);
          if (end.picks.length === 0) return { turn, claimed: [] };
          // A pick another turn of the session showed within the window (a concurrent prompt) is not claimed: no update, no row returned.
          const claimed = new Set(
            q<{ memory_id: string }, [string, number, string, number]>(
              `INSERT INTO recall_shown(session_id, memory_id, turn) SELECT ?1, value, ?2 FROM json_each(?3) WHERE true
               ON CONFLICT(session_id, memory_id) DO UPDATE SET turn = excluded.turn WHERE recall_shown.turn <= ?4
               RETURNING memory_id`,
            )
              .all(end.sessionId, turn, JSON.stringify(end.picks), turn - end.window)
              .map((r) => r.memory_id),
          );
          const ids = end.picks.filter((id) => claimed.has(id));
          if (ids.length > 0) {
            const json = JSON.stringify(ids);
            q<unknown, [number, string]>(
              `UPDATE memories SET shown_count = shown_count + 1, last_shown_at = ?1, refreshed_at = max(refreshed_at, ?1)
               WHERE id IN (SELECT value FROM json_each(?2))`,
            ).run(end.now, json);
            q<unknown, [number, string]>("INSERT INTO memory_events(memory_id, kind, at) SELECT value, 'shown', ?1 FROM json_each(?2)").run(end.now, json);
          }
          // Rows past the window only cost space: drop them while we are here.
          q<unknown, [string, number]>("DELETE FROM recall_shown WHERE session_id = ? AND turn <= ?").run(end.sessionId, turn - end.window);
          return { turn, claimed: ids };
        }),
      ),

    resetSession: (sessionId) =>
      h.write(() =>
        transact(db, () => {
          q<unknown, [string]>("DELETE FROM recall_shown WHERE session_id = ?").run(sessionId);
          // Its topic goes through the cascade.
          q<unknown, [string]>("DELETE FROM recall_sessions WHERE session_id = ?").run(sessionId);
        }),
      ),

    expireSessions: async (e, dryRun) => {
      if (!dryRun) return h.write(() => transact(db, () => expire(e)));
      const expired = q<{ n: number }, [{ idle: number; oneTurn: number }]>(`SELECT count(*) AS n FROM recall_sessions WHERE ${EXPIRED}`).get(
        expiryParams(e),
      )!.n;
      return expired + Math.max(0, count() - expired - e.max);
    },

    candidateRows: async (seqs) =>
      q<RecallMemoryRow, [string]>(
        `SELECT seq, id, content, memory_type AS memoryType, project, created_at AS createdAt, strength, refreshed_at AS refreshedAt
         FROM memories WHERE seq IN (SELECT value FROM json_each(?))`,
      ).all(JSON.stringify(seqs)),
  };
}
