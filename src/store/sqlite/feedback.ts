import type { FeedbackEventRow, FeedbackStore } from "../../core/memories";
import type { ProjectScope } from "../../core/scope";
import type { SqliteHandle } from "./storage";

/** Feedback events (memory_events of kinds other than shown and used; migration 0016) on SQLite. */
export function sqliteFeedback(h: SqliteHandle): FeedbackStore {
  const db = h.sqlite;
  return {
    addEvent: async (e) => {
      await h.write(() => db.query("INSERT INTO memory_events(memory_id, kind, at, detail) VALUES (?, ?, ?, ?)").run(e.memoryId, e.kind, e.at, e.detail));
    },
    liveEvents: async () =>
      db
        .query<FeedbackEventRow, []>(
          `SELECT e.memory_id AS memoryId, e.kind AS kind, e.at AS at, e.detail AS detail
             FROM memory_events e JOIN memories m ON m.id = e.memory_id
            WHERE e.kind NOT IN ('shown', 'used') AND (e.kind IN ('retired', 'unretired') OR e.at >= m.updated_at)
            ORDER BY e.at, e.id`,
        )
        .all(),
    counts: async (since, until, scope: ProjectScope = null) =>
      scope !== null
        ? db
            .query<{ kind: string; n: number }, [number, number, string]>(
              `SELECT e.kind AS kind, count(*) AS n FROM memory_events e JOIN memories m ON m.id = e.memory_id
                WHERE e.kind NOT IN ('shown', 'used') AND e.at >= ? AND e.at < ? AND m.project IN (SELECT value FROM json_each(?)) GROUP BY e.kind`,
            )
            .all(since, until, JSON.stringify(scope))
        : db
            .query<{ kind: string; n: number }, [number, number]>(
              "SELECT kind, count(*) AS n FROM memory_events WHERE kind NOT IN ('shown', 'used') AND at >= ? AND at < ? GROUP BY kind",
            )
            .all(since, until),
  };
}
