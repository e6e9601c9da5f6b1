import type { AnalyticsStore, DashboardFigures, DomainRows } from "../../core/analytics";
import type { ProjectScope } from "../../core/scope";
import type { PgHandle } from "./open";

const DAY_MS = 86_400_000;

/**
 * analytics/ on PostgreSQL. Aggregates are computed by the database from the
 * indexes of migrations/0001_init.sql (memories_type_created, memory_events_kind_at,
 * the never-shown/never-used partial indexes, the trigger-kept
 * memory_primary_domain); daily figures are one GROUP BY over the window's
 * index range. Raw SQL for the recursive skip-scans drizzle cannot say; every
 * count is cast to int (PostgreSQL's bigint would arrive as a string).
 */
export function pgAnalytics(h: PgHandle): AnalyticsStore {
  const S = h.schema;

  async function figures(x: PgHandle, w: { start: number; days: number }, knownTypes: readonly string[]): Promise<DashboardFigures> {
    const end = w.start + w.days * DAY_MS;
    const [counts] = await x.sql.unsafe(
      // Distinct tags and types by skip-scan (one index seek per value), not a pass over every row.
      `WITH RECURSIVE t(tag) AS (SELECT min(tag) FROM ${S}.memory_tags
         UNION ALL SELECT (SELECT min(tag) FROM ${S}.memory_tags WHERE tag > t.tag) FROM t WHERE t.tag IS NOT NULL)
       SELECT (SELECT count(*) FROM ${S}.memories)::int AS memories,
              (SELECT count(*) FROM ${S}.memories WHERE memory_type = 'learnings')::int AS learnings,
              (SELECT count(*) FROM ${S}.links)::int AS links,
              (SELECT count(tag) FROM t)::int AS domains,
              (SELECT count(*) FROM ${S}.memories WHERE created_at < $1)::int AS base`,
      [w.start],
    );
    const stored = await x.sql.unsafe(
      `WITH RECURSIVE t(x) AS (SELECT min(memory_type) FROM ${S}.memories
         UNION ALL SELECT (SELECT min(memory_type) FROM ${S}.memories WHERE memory_type > t.x) FROM t WHERE t.x IS NOT NULL)
       SELECT x FROM t WHERE x IS NOT NULL ORDER BY x COLLATE "C"`,
    );
    const types = [...knownTypes];
    for (const { x: type } of stored as { x: string }[]) if (!types.includes(type)) types.push(type);
    const growthPerDay = (await x.sql.unsafe(
      `SELECT ((created_at - $1) / ${DAY_MS})::int AS i, memory_type AS type, count(*)::int AS n
         FROM ${S}.memories WHERE created_at >= $1 AND created_at < $2 GROUP BY 1, 2`,
      [w.start, end],
    )) as DashboardFigures["growthPerDay"];
    const primaryDomains = (await x.sql.unsafe(
      `SELECT domain, count(*)::int AS n FROM ${S}.memory_primary_domain GROUP BY domain`,
    )) as DashboardFigures["primaryDomains"];
    const [recall] = await x.sql.unsafe(
      `SELECT (SELECT count(*) FROM ${S}.memory_events WHERE kind = 'shown')::int AS "shown",
              (SELECT count(*) FROM ${S}.memory_events WHERE kind = 'used')::int AS "used",
              (SELECT count(*) FROM ${S}.memories)::int AS "memories",
              (SELECT count(*) FROM ${S}.memories WHERE shown_count = 0)::int AS "neverShown",
              (SELECT count(*) FROM ${S}.memories WHERE used_count = 0)::int AS "neverUsed"`,
    );
    const events = (await x.sql.unsafe(
      `SELECT ((at - $1) / ${DAY_MS})::int AS i, count(*) FILTER (WHERE kind = 'shown')::int AS shown, count(*) FILTER (WHERE kind = 'used')::int AS used
         FROM ${S}.memory_events WHERE kind IN ('shown', 'used') AND at >= $1 AND at < $2 GROUP BY 1`,
      [w.start, end],
    )) as { i: number; shown: number; used: number }[];
    const byDay = new Map(events.map((e) => [e.i, e]));
    const recallPerDay = Array.from({ length: w.days }, (_, i) => ({ i, shown: byDay.get(i)?.shown ?? 0, used: byDay.get(i)?.used ?? 0 }));
    const { base, ...rest } = counts as DashboardFigures["counts"] & { base: number };
    return { counts: rest, growthBase: base, types, growthPerDay, primaryDomains, recall: recall as DashboardFigures["recall"], recallPerDay };
  }

  /**
   * The figures within a scope (its projects as one JSON parameter, $1):
   * every count, type, domain and event of the scope's memories only, read
   * through memories_project. Events of deleted memories belong to no scope.
   * Only scoped callers run these (the unscoped figures stay as above).
   */
  async function scopedFigures(
    x: PgHandle,
    w: { start: number; days: number },
    knownTypes: readonly string[],
    scope: readonly string[],
  ): Promise<DashboardFigures> {
    const end = w.start + w.days * DAY_MS;
    const IN = "m.project IN (SELECT jsonb_array_elements_text($1::jsonb))";
    const p = [JSON.stringify(scope)];
    const EVENTS = `FROM ${S}.memory_events e JOIN ${S}.memories m ON m.id = e.memory_id WHERE ${IN}`;
    const [c] = await x.sql.unsafe(
      `SELECT (SELECT count(*) FROM ${S}.memories m WHERE ${IN})::int AS memories,
              (SELECT count(*) FROM ${S}.memories m WHERE ${IN} AND m.memory_type = 'learnings')::int AS learnings,
              (SELECT count(*) FROM ${S}.memories m JOIN ${S}.links l ON l.from_id = m.id
                WHERE ${IN} AND EXISTS (SELECT 1 FROM ${S}.memories o WHERE o.id = l.to_id AND o.project IN (SELECT jsonb_array_elements_text($1::jsonb))))::int AS links,
              (SELECT count(DISTINCT t.tag) FROM ${S}.memories m JOIN ${S}.memory_tags t ON t.memory_id = m.id WHERE ${IN})::int AS domains,
              (SELECT count(*) FROM ${S}.memories m WHERE ${IN} AND m.created_at < $2)::int AS base,
              (SELECT count(*) ${EVENTS} AND e.kind = 'shown')::int AS "shown",
              (SELECT count(*) ${EVENTS} AND e.kind = 'used')::int AS "used",
              (SELECT count(*) FROM ${S}.memories m WHERE ${IN} AND m.shown_count = 0)::int AS "neverShown",
              (SELECT count(*) FROM ${S}.memories m WHERE ${IN} AND m.used_count = 0)::int AS "neverUsed"`,
      [...p, w.start],
    );
    const stored = await x.sql.unsafe(`SELECT x FROM (SELECT DISTINCT m.memory_type AS x FROM ${S}.memories m WHERE ${IN}) d ORDER BY x COLLATE "C"`, p);
    const types = [...knownTypes];
    for (const { x: type } of stored as { x: string }[]) if (!types.includes(type)) types.push(type);
    const growthPerDay = (await x.sql.unsafe(
      `SELECT ((m.created_at - $2) / ${DAY_MS})::int AS i, m.memory_type AS type, count(*)::int AS n
         FROM ${S}.memories m WHERE ${IN} AND m.created_at >= $2 AND m.created_at < $3 GROUP BY 1, 2`,
      [...p, w.start, end],
    )) as DashboardFigures["growthPerDay"];
    const primaryDomains = (await x.sql.unsafe(
      `SELECT d.domain, count(*)::int AS n FROM ${S}.memories m JOIN ${S}.memory_primary_domain d ON d.memory_id = m.id WHERE ${IN} GROUP BY d.domain`,
      p,
    )) as DashboardFigures["primaryDomains"];
    const events = (await x.sql.unsafe(
      `SELECT ((e.at - $2) / ${DAY_MS})::int AS i, count(*) FILTER (WHERE e.kind = 'shown')::int AS shown, count(*) FILTER (WHERE e.kind = 'used')::int AS used
         ${EVENTS} AND e.kind IN ('shown', 'used') AND e.at >= $2 AND e.at < $3 GROUP BY 1`,
      [...p, w.start, end],
    )) as { i: number; shown: number; used: number }[];
    const byDay = new Map(events.map((e) => [e.i, e]));
    const recallPerDay = Array.from({ length: w.days }, (_, i) => ({ i, shown: byDay.get(i)?.shown ?? 0, used: byDay.get(i)?.used ?? 0 }));
    const r = c as Record<string, number>;
    return {
      counts: { memories: r.memories, learnings: r.learnings, links: r.links, domains: r.domains },
      growthBase: r.base,
      types,
      growthPerDay,
      primaryDomains,
      recall: { shown: r.shown, used: r.used, memories: r.memories, neverShown: r.neverShown, neverUsed: r.neverUsed },
      recallPerDay,
    };
  }

  /** Runs `fn` in one read-only snapshot (REPEATABLE READ), or in the caller's transaction. */
  const snapshot = async <T>(fn: (x: PgHandle) => Promise<T>): Promise<T> => {
    if (h.inTransaction) return fn(h);
    return (await h.sql.begin("isolation level repeatable read read only", (tx) => fn(h.bind(tx)))) as T;
  };

  return {
    dashboardFigures: (w, knownTypes, scope: ProjectScope = null) =>
      snapshot((x) => (scope === null ? figures(x, w, knownTypes) : scopedFigures(x, w, knownTypes, scope))),
    async shownNeverUsed(limit, scope: ProjectScope = null) {
      if (scope !== null)
        return (await h.sql.unsafe(
          `SELECT id, content, project, shown_count::int AS "shownCount" FROM ${S}.memories
            WHERE used_count = 0 AND shown_count > 0 AND project IN (SELECT jsonb_array_elements_text($2::jsonb)) ORDER BY shown_count DESC, id LIMIT $1::int`,
          [limit, JSON.stringify(scope)],
        )) as { id: string; content: string; project: string | null; shownCount: number }[];
      const rows = await h.sql.unsafe(
        `SELECT id, content, project, shown_count::int AS "shownCount" FROM ${S}.memories WHERE used_count = 0 AND shown_count > 0 ORDER BY shown_count DESC, id LIMIT $1::int`,
        [limit],
      );
      return rows as { id: string; content: string; project: string | null; shownCount: number }[];
    },
    async memoriesFingerprint() {
      const [row] = await h.sql.unsafe(`SELECT count(*)::int AS count, max(seq)::float8 AS "maxSeq" FROM ${S}.memories`);
      return row as { count: number; maxSeq: number | null };
    },
    domainRows: (scope = null) =>
      snapshot(async (x): Promise<DomainRows> => {
        // Within a scope (one JSON parameter, $1) every row and total is of its memories only.
        const where = scope === null ? "" : "WHERE m.project IN (SELECT jsonb_array_elements_text($1::jsonb))";
        const params = scope === null ? [] : [JSON.stringify(scope)];
        const [totals] = await x.sql.unsafe(
          `SELECT count(*)::int AS memories, count(*) FILTER (WHERE memory_type = 'learnings')::int AS learnings, count(DISTINCT project)::int AS projects FROM ${S}.memories m ${where}`,
          params,
        );
        const memories = await x.sql.unsafe(`SELECT id, project, memory_type AS "memoryType" FROM ${S}.memories m ${where}`, params);
        const tags = await x.sql.unsafe(
          scope === null
            ? `SELECT memory_id AS "memoryId", tag, weight FROM ${S}.memory_tags`
            : `SELECT t.memory_id AS "memoryId", t.tag, t.weight FROM ${S}.memories m JOIN ${S}.memory_tags t ON t.memory_id = m.id ${where}`,
          params,
        );
        const projects = await x.sql.unsafe(
          `SELECT project, count(*)::int AS memories, count(*) FILTER (WHERE memory_type = 'learnings')::int AS learnings FROM ${S}.memories m ${where} GROUP BY project ORDER BY memories DESC`,
          params,
        );
        return { totals: totals as DomainRows["totals"], memories: [...memories], tags: [...tags], projects: [...projects] } as DomainRows;
      }),
    async domainSample(tag, limit) {
      // No rowid here: the newest memories of the tag by seq (SQLite: the newest tag rows).
      const rows = await h.sql.unsafe(
        `SELECT m.content FROM ${S}.memory_tags t JOIN ${S}.memories m ON m.id = t.memory_id WHERE t.tag = $1 ORDER BY m.seq DESC LIMIT $2`,
        [tag, limit],
      );
      return (rows as { content: string }[]).map((r) => r.content);
    },
  };
}
