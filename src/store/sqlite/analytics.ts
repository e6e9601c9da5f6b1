import type { Statement } from "bun:sqlite";
import type { AnalyticsStore, DashboardFigures, DomainRows } from "../../core/analytics";
import type { ProjectScope } from "../../core/scope";
import type { SqliteHandle } from "./storage";
import { LINK_COUNT_SQL, MEMORY_COUNT_SQL } from "./row-counts";

const DAY_MS = 86_400_000;

/**
 * The window's days as rows (i, s = start of the day in ms). Daily figures
 * are counted per day as index range counts against it, not grouped: a GROUP
 * BY on a computed day sorts every row of the window (measured at 100k
 * memories / 300k events: ~90 ms of CPU for a year of events, against ~11 ms).
 */
const DAYS_CTE = `WITH RECURSIVE d(i, s) AS (SELECT 0, :start UNION ALL SELECT i + 1, s + ${DAY_MS} FROM d WHERE i + 1 < :days)`;

/**
 * analytics/ on SQLite. Every aggregate is computed by SQLite from indexes
 * (range counts, skip-scans, a trigger-kept primary domain table;
 * migrations/0003_analytics.sql), never by loading rows into JS.
 */
export function sqliteAnalytics(h: SqliteHandle): AnalyticsStore {
  const db = h.sqlite;
  const cache = new Map<string, Statement>();
  const q = (text: string): Statement => {
    let st = cache.get(text);
    if (!st) cache.set(text, (st = db.query(text)));
    return st;
  };

  function figures(w: { start: number; days: number }, knownTypes: readonly string[]): DashboardFigures {
    const counts = q(
      // Distinct tags by skip-scan (one seek of memory_tags_tag per tag), not a pass over every tag row.
      `WITH RECURSIVE t(tag) AS (SELECT min(tag) FROM memory_tags
         UNION ALL SELECT (SELECT min(tag) FROM memory_tags WHERE tag > t.tag) FROM t WHERE t.tag IS NOT NULL)
       SELECT ${MEMORY_COUNT_SQL} AS memories,
              (SELECT count(*) FROM memories WHERE memory_type = 'learnings') AS learnings,
              ${LINK_COUNT_SQL} AS links,
              (SELECT count(tag) FROM t) AS domains`,
    ).get() as DashboardFigures["counts"];
    const growthBase = (q("SELECT count(*) AS n FROM memories WHERE created_at < ?").get(w.start) as { n: number }).n;
    const types = [...knownTypes];
    // Every memory_type stored, without reading every row: one index seek per distinct value.
    const stored = q(
      `WITH RECURSIVE t(x) AS (SELECT min(memory_type) FROM memories
         UNION ALL SELECT (SELECT min(memory_type) FROM memories WHERE memory_type > t.x) FROM t WHERE t.x IS NOT NULL)
       SELECT x FROM t WHERE x IS NOT NULL`,
    ).all() as { x: string }[];
    for (const { x } of stored) if (!types.includes(x)) types.push(x);
    const growthPerDay = q(
      `${DAYS_CTE}
       SELECT d.i AS i, t.value AS type,
              (SELECT count(*) FROM memories WHERE memory_type = t.value AND created_at >= d.s AND created_at < d.s + ${DAY_MS}) AS n
         FROM d, json_each(:types) AS t`,
    ).all({ start: w.start, days: w.days, types: JSON.stringify(types) }) as DashboardFigures["growthPerDay"];
    const primaryDomains = q("SELECT domain, count(*) AS n FROM memory_primary_domain GROUP BY domain").all() as DashboardFigures["primaryDomains"];
    // Showings and uses come from memory_events (history that outlives deleted memories).
    const recall = q(
      `SELECT (SELECT count(*) FROM memory_events WHERE kind = 'shown') AS shown,
              (SELECT count(*) FROM memory_events WHERE kind = 'used') AS used,
              ${MEMORY_COUNT_SQL} AS memories,
              (SELECT count(*) FROM memories WHERE shown_count = 0) AS neverShown,
              (SELECT count(*) FROM memories WHERE used_count = 0) AS neverUsed`,
    ).get() as DashboardFigures["recall"];
    const recallPerDay = q(
      `${DAYS_CTE}
       SELECT i, (SELECT count(*) FROM memory_events WHERE kind = 'shown' AND at >= d.s AND at < d.s + ${DAY_MS}) AS shown,
                 (SELECT count(*) FROM memory_events WHERE kind = 'used' AND at >= d.s AND at < d.s + ${DAY_MS}) AS used
         FROM d ORDER BY i`,
    ).all({ start: w.start, days: w.days }) as DashboardFigures["recallPerDay"];
    return { counts, growthBase, types, growthPerDay, primaryDomains, recall, recallPerDay };
  }

  /**
   * The figures within a scope (`scope`: its projects as JSON, bound as
   * :scope): every count, type, domain and event of the scope's memories
   * only, read through memories_project. Events of deleted memories belong to
   * no scope. Only scoped callers run these (the unscoped figures stay as above).
   */
  function scopedFigures(w: { start: number; days: number }, knownTypes: readonly string[], scope: string): DashboardFigures {
    const IN = "m.project IN (SELECT value FROM json_each(:scope))";
    const end = w.start + w.days * DAY_MS;
    const counts = q(
      `SELECT (SELECT count(*) FROM memories m WHERE ${IN}) AS memories,
              (SELECT count(*) FROM memories m WHERE ${IN} AND m.memory_type = 'learnings') AS learnings,
              (SELECT count(*) FROM memories m JOIN links l ON l.from_id = m.id
                WHERE ${IN} AND EXISTS (SELECT 1 FROM memories o WHERE o.id = l.to_id AND o.project IN (SELECT value FROM json_each(:scope)))) AS links,
              (SELECT count(DISTINCT t.tag) FROM memories m JOIN memory_tags t ON t.memory_id = m.id WHERE ${IN}) AS domains`,
    ).get({ scope }) as DashboardFigures["counts"];
    const growthBase = (q(`SELECT count(*) AS n FROM memories m WHERE ${IN} AND m.created_at < :start`).get({ scope, start: w.start }) as { n: number }).n;
    const types = [...knownTypes];
    const stored = q(`SELECT DISTINCT m.memory_type AS x FROM memories m WHERE ${IN} ORDER BY x`).all({ scope }) as { x: string }[];
    for (const { x } of stored) if (!types.includes(x)) types.push(x);
    const growthPerDay = q(
      `SELECT (m.created_at - :start) / ${DAY_MS} AS i, m.memory_type AS type, count(*) AS n
         FROM memories m WHERE ${IN} AND m.created_at >= :start AND m.created_at < :end GROUP BY 1, 2`,
    ).all({ scope, start: w.start, end }) as DashboardFigures["growthPerDay"];
    const primaryDomains = q(
      `SELECT d.domain AS domain, count(*) AS n FROM memories m JOIN memory_primary_domain d ON d.memory_id = m.id WHERE ${IN} GROUP BY d.domain`,
    ).all({ scope }) as DashboardFigures["primaryDomains"];
    const EVENTS = `FROM memory_events e JOIN memories m ON m.id = e.memory_id WHERE ${IN}`;
    const recall = q(
      `SELECT (SELECT count(*) ${EVENTS} AND e.kind = 'shown') AS shown,
              (SELECT count(*) ${EVENTS} AND e.kind = 'used') AS used,
              (SELECT count(*) FROM memories m WHERE ${IN}) AS memories,
              (SELECT count(*) FROM memories m WHERE ${IN} AND m.shown_count = 0) AS neverShown,
              (SELECT count(*) FROM memories m WHERE ${IN} AND m.used_count = 0) AS neverUsed`,
    ).get({ scope }) as DashboardFigures["recall"];
    const events = q(
      `SELECT (e.at - :start) / ${DAY_MS} AS i, sum(e.kind = 'shown') AS shown, sum(e.kind = 'used') AS used
         ${EVENTS} AND e.kind IN ('shown', 'used') AND e.at >= :start AND e.at < :end GROUP BY 1`,
    ).all({ scope, start: w.start, end }) as { i: number; shown: number; used: number }[];
    const byDay = new Map(events.map((e) => [e.i, e]));
    const recallPerDay = Array.from({ length: w.days }, (_, i) => ({ i, shown: byDay.get(i)?.shown ?? 0, used: byDay.get(i)?.used ?? 0 }));
    return { counts, growthBase, types, growthPerDay, primaryDomains, recall, recallPerDay };
  }

  /** domainRows within a scope (`scope`: its projects as JSON), read through memories_project. */
  function scopedDomainRows(scope: string): DomainRows {
    const IN = "m.project IN (SELECT value FROM json_each(?))";
    const t = q(
      `SELECT count(*) AS memories, sum(memory_type = 'learnings') AS learnings, count(DISTINCT project) AS projects FROM memories m WHERE ${IN}`,
    ).get(scope) as DomainRows["totals"];
    return {
      totals: { ...t, learnings: t.learnings ?? 0 },
      memories: q(`SELECT id, project, memory_type AS memoryType FROM memories m WHERE ${IN}`).all(scope) as DomainRows["memories"],
      tags: q(`SELECT t.memory_id AS memoryId, t.tag AS tag, t.weight AS weight FROM memories m JOIN memory_tags t ON t.memory_id = m.id WHERE ${IN}`).all(
        scope,
      ) as DomainRows["tags"],
      projects: q(
        `SELECT project, count(*) AS memories, coalesce(sum(memory_type = 'learnings'), 0) AS learnings FROM memories m WHERE ${IN} GROUP BY project ORDER BY memories DESC`,
      ).all(scope) as DomainRows["projects"],
    };
  }

  return {
    async dashboardFigures(w, knownTypes, scope: ProjectScope = null) {
      // One read transaction: every figure describes the same moment, even while captures write.
      if (scope !== null) return db.transaction(() => scopedFigures(w, knownTypes, JSON.stringify(scope)))();
      return db.transaction(() => figures(w, knownTypes))();
    },
    async shownNeverUsed(limit, scope: ProjectScope = null) {
      if (scope !== null)
        return q(
          `SELECT id, content, project, shown_count AS shownCount FROM memories
            WHERE used_count = 0 AND shown_count > 0 AND project IN (SELECT value FROM json_each(?)) ORDER BY shown_count DESC, id LIMIT ?`,
        ).all(JSON.stringify(scope), limit) as { id: string; content: string; project: string | null; shownCount: number }[];
      // memories_shown_unused (migration 0016): the never-used memories by showings, read from the top.
      return q(
        "SELECT id, content, project, shown_count AS shownCount FROM memories WHERE used_count = 0 AND shown_count > 0 ORDER BY shown_count DESC, id LIMIT ?",
      ).all(limit) as {
        id: string;
        content: string;
        project: string | null;
        shownCount: number;
      }[];
    },
    async memoriesFingerprint() {
      return q("SELECT count(*) AS count, max(seq) AS maxSeq FROM memories").get() as { count: number; maxSeq: number | null };
    },
    async domainRows(scope = null) {
      if (scope !== null) return db.transaction(() => scopedDomainRows(JSON.stringify(scope)))();
      return db.transaction(
        (): DomainRows => ({
          totals: (() => {
            const t = q(
              "SELECT count(*) AS memories, sum(memory_type = 'learnings') AS learnings, count(DISTINCT project) AS projects FROM memories",
            ).get() as DomainRows["totals"];
            return { ...t, learnings: t.learnings ?? 0 };
          })(),
          memories: q("SELECT id, project, memory_type AS memoryType FROM memories").all() as DomainRows["memories"],
          tags: q("SELECT memory_id AS memoryId, tag, weight FROM memory_tags").all() as DomainRows["tags"],
          projects: q(
            "SELECT project, count(*) AS memories, coalesce(sum(memory_type = 'learnings'), 0) AS learnings FROM memories GROUP BY project ORDER BY memories DESC",
          ).all() as DomainRows["projects"],
        }),
      )();
    },
    async domainSample(tag, limit) {
      // memory_tags_tag orders each tag's rows by rowid: the newest tags come first without a sort.
      return (
        q("SELECT m.content AS content FROM memory_tags t JOIN memories m ON m.id = t.memory_id WHERE t.tag = ? ORDER BY t.rowid DESC LIMIT ?").all(
          tag,
          limit,
        ) as { content: string }[]
      ).map((r) => r.content);
    },
  };
}
