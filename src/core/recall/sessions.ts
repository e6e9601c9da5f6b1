import type { Services } from "../services";
import { RECALL_ONE_TURN_SESSION_TTL_DAYS, RECALL_SESSION_TTL_DAYS, RECALL_SESSIONS_MAX } from "../tuning";

const DAY_MS = 86_400_000;

/**
 * Bounds the recall state (`recall_sessions`, and `recall_shown` through its
 * cascade): sessions idle RECALL_SESSION_TTL_DAYS go, single-prompt sessions
 * after RECALL_ONE_TURN_SESSION_TTL_DAYS, and past RECALL_SESSIONS_MAX the
 * least recently used. Runs when a session starts (inside its transaction)
 * and in the nightly prune. Returns how many sessions were (or, with
 * dryRun, would be) dropped.
 */
export function expireRecallSessions(s: Services, opts: { dryRun?: boolean; max?: number } = {}): number {
  const db = s.store.sqlite;
  const now = s.now();
  const params = { long: now - RECALL_SESSION_TTL_DAYS * DAY_MS, short: now - RECALL_ONE_TURN_SESSION_TTL_DAYS * DAY_MS };
  const where = "updated_at < :long OR (turn <= 1 AND updated_at < :short)";
  const max = opts.max ?? RECALL_SESSIONS_MAX;
  if (opts.dryRun) {
    const expired = db.query<{ n: number }, typeof params>(`SELECT count(*) AS n FROM recall_sessions WHERE ${where}`).get(params)!.n;
    const left = db.query<{ n: number }, []>("SELECT count(*) AS n FROM recall_sessions").get()!.n - expired;
    return expired + Math.max(0, left - max);
  }
  let dropped = db.query<{ id: string }, typeof params>(`DELETE FROM recall_sessions WHERE ${where} RETURNING session_id AS id`).all(params).length;
  const over = db.query<{ n: number }, []>("SELECT count(*) AS n FROM recall_sessions").get()!.n - max;
  if (over > 0) {
    dropped += db
      .query<{ id: string }, [number]>(
        "DELETE FROM recall_sessions WHERE session_id IN (SELECT session_id FROM recall_sessions ORDER BY updated_at, session_id LIMIT ?) RETURNING session_id AS id",
      )
      .all(over).length;
  }
  return dropped;
}
