import type { FeedbackEventRow, FeedbackStore } from "../../core/memories";
import type { ProjectScope } from "../../core/scope";
import type { PgHandle } from "./open";

/** Feedback events (memory_events of kinds other than shown and used; migrations/0005_receipts.sql) on PostgreSQL. */
export function pgFeedback(h: PgHandle): FeedbackStore {
  const S = h.schema;
  return {
    addEvent: async (e) => {
      await h.sql.unsafe(`INSERT INTO ${S}.memory_events (memory_id, kind, at, detail) VALUES ($1::text, $2::text, $3::bigint, $4::text)`, [
        e.memoryId,
        e.kind,
        e.at,
        e.detail,
      ]);
    },
    liveEvents: async () => {
      const rows = await h.sql.unsafe(
        `SELECT e.memory_id AS "memoryId", e.kind, e.at::float8 AS at, e.detail
           FROM ${S}.memory_events e JOIN ${S}.memories m ON m.id = e.memory_id
          WHERE e.kind NOT IN ('shown', 'used') AND (e.kind IN ('retired', 'unretired') OR e.at >= m.updated_at)
          ORDER BY e.at, e.id`,
      );
      return rows as FeedbackEventRow[];
    },
    counts: async (since, until, scope: ProjectScope = null) =>
      (await h.sql.unsafe(
        scope === null
          ? `SELECT kind, count(*)::int AS n FROM ${S}.memory_events WHERE kind NOT IN ('shown', 'used') AND at >= $1::bigint AND at < $2::bigint GROUP BY kind`
          : `SELECT e.kind, count(*)::int AS n FROM ${S}.memory_events e JOIN ${S}.memories m ON m.id = e.memory_id
              WHERE e.kind NOT IN ('shown', 'used') AND e.at >= $1::bigint AND e.at < $2::bigint AND m.project IN (SELECT jsonb_array_elements_text($3::jsonb)) GROUP BY e.kind`,
        scope === null ? [since, until] : [since, until, JSON.stringify(scope)],
      )) as {
        kind: string;
        n: number;
      }[],
  };
}
