import { isoDate } from "../dates";
import { MEMORY_TYPES } from "../memories";
import type { Services } from "../services";

const DAY_MS = 86_400_000;

/** Whole UTC days [start, end) in epoch ms. */
export interface Window {
  days: number;
  start: number;
  end: number;
}

export interface GrowthDay {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  /** Memories created that day (still stored). */
  added: number;
  /** ...by memory_type: every current type is present, 0 when none. */
  by_type: Record<string, number>;
  /** Memories created up to the end of that day, the base included. */
  total: number;
}

export interface Growth {
  /** Memories created before the window (still stored): where the cumulative line starts. */
  base: number;
  /** Memory types in `by_type`, current types first. */
  types: string[];
  /** One entry per day of the window, oldest first, days without memories included. */
  days: GrowthDay[];
}

export interface RecallDay {
  day: string;
  showings: number;
  uses: number;
  /** uses / showings of that day (3 decimals), null on a day without showings. */
  uses_per_showing: number | null;
}

export interface RecallAdoption {
  /** All-time times a memory appeared in a recall index (one per memory per index). */
  showings: number;
  /** All-time fetches of a memory (GET /memory, memsvc_get). */
  uses: number;
  /** The headline: uses / showings (3 decimals), null before the first showing. */
  uses_per_showing: number | null;
  /** Stored memories never shown / never used, and their share of all stored memories (null when there are none). */
  never_shown: number;
  never_used: number;
  never_shown_share: number | null;
  never_used_share: number | null;
  /** One entry per day of the window, oldest first. */
  days: RecallDay[];
}

const ratio = (num: number, den: number): number | null => (den === 0 ? null : Math.round((num / den) * 1000) / 1000);

function dayKeys(w: Window): string[] {
  return Array.from({ length: w.days }, (_, i) => isoDate(w.start + i * DAY_MS));
}

/**
 * The window's days as rows (i, s = start of the day in ms). Daily figures
 * are counted per day as index range counts against it, not grouped: a GROUP
 * BY on a computed day sorts every row of the window (measured at 100k
 * memories / 300k events: ~90 ms of CPU for a year of events, against ~11 ms).
 */
const DAYS_CTE = `WITH RECURSIVE d(i, s) AS (SELECT 0, :start UNION ALL SELECT i + 1, s + ${DAY_MS} FROM d WHERE i + 1 < :days)`;

/** Every memory_type stored, without reading every row: one index seek per distinct value. */
function storedTypes(s: Services): string[] {
  return s.store.sqlite
    .query<{ x: string }, []>(
      `WITH RECURSIVE t(x) AS (SELECT min(memory_type) FROM memories
         UNION ALL SELECT (SELECT min(memory_type) FROM memories WHERE memory_type > t.x) FROM t WHERE t.x IS NOT NULL)
       SELECT x FROM t WHERE x IS NOT NULL`,
    )
    .all()
    .map((r) => r.x);
}

/** Memories per day and type over the window, with a running total from the base. */
export function growthSeries(s: Services, w: Window): Growth {
  const sql = s.store.sqlite;
  const base = sql.query<{ n: number }, [number]>("SELECT count(*) AS n FROM memories WHERE created_at < ?").get(w.start)!.n;
  const types: string[] = [...MEMORY_TYPES];
  for (const t of storedTypes(s)) if (!types.includes(t)) types.push(t);
  const counts = Array.from({ length: w.days }, () => Object.fromEntries(types.map((t) => [t, 0])) as Record<string, number>);
  const rows = sql
    .query<{ i: number; type: string; n: number }, { start: number; days: number; types: string }>(
      `${DAYS_CTE}
       SELECT d.i AS i, t.value AS type,
              (SELECT count(*) FROM memories WHERE memory_type = t.value AND created_at >= d.s AND created_at < d.s + ${DAY_MS}) AS n
         FROM d, json_each(:types) AS t`,
    )
    .all({ start: w.start, days: w.days, types: JSON.stringify(types) });
  for (const r of rows) counts[r.i][r.type] = r.n;
  let total = base;
  const keys = dayKeys(w);
  const days = counts.map((by_type, i) => {
    const added = Object.values(by_type).reduce((a, b) => a + b, 0);
    total += added;
    return { day: keys[i], added, by_type, total };
  });
  return { base, types, days };
}

/**
 * Showings and uses come from memory_events (history that outlives deleted
 * memories); the never-shown/never-used shares from the counters of the
 * memories stored now. Every count here is answered from an index
 * (migrations/0003_analytics.sql).
 */
export function recallAdoption(s: Services, w: Window): RecallAdoption {
  const sql = s.store.sqlite;
  const totals = sql
    .query<{ shown: number; used: number; memories: number; never_shown: number; never_used: number }, []>(
      `SELECT (SELECT count(*) FROM memory_events WHERE kind = 'shown') AS shown,
              (SELECT count(*) FROM memory_events WHERE kind = 'used') AS used,
              (SELECT count(*) FROM memories) AS memories,
              (SELECT count(*) FROM memories WHERE shown_count = 0) AS never_shown,
              (SELECT count(*) FROM memories WHERE used_count = 0) AS never_used`,
    )
    .get()!;
  const perDay = sql
    .query<{ i: number; shown: number; used: number }, { start: number; days: number }>(
      `${DAYS_CTE}
       SELECT i, (SELECT count(*) FROM memory_events WHERE kind = 'shown' AND at >= d.s AND at < d.s + ${DAY_MS}) AS shown,
                 (SELECT count(*) FROM memory_events WHERE kind = 'used' AND at >= d.s AND at < d.s + ${DAY_MS}) AS used
         FROM d ORDER BY i`,
    )
    .all({ start: w.start, days: w.days });
  const keys = dayKeys(w);
  return {
    showings: totals.shown,
    uses: totals.used,
    uses_per_showing: ratio(totals.used, totals.shown),
    never_shown: totals.never_shown,
    never_used: totals.never_used,
    never_shown_share: ratio(totals.never_shown, totals.memories),
    never_used_share: ratio(totals.never_used, totals.memories),
    days: perDay.map((d) => ({ day: keys[d.i], showings: d.shown, uses: d.used, uses_per_showing: ratio(d.used, d.shown) })),
  };
}
