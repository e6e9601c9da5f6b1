import { isoDate } from "../dates";
import type { DashboardFigures } from "./store";

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

/** Memories per day and type over the window, with a running total from the base. */
export function growthSeries(f: DashboardFigures, w: Window): Growth {
  const counts = Array.from({ length: w.days }, () => Object.fromEntries(f.types.map((t) => [t, 0])) as Record<string, number>);
  for (const r of f.growthPerDay) counts[r.i][r.type] = r.n;
  let total = f.growthBase;
  const keys = dayKeys(w);
  const days = counts.map((by_type, i) => {
    const added = Object.values(by_type).reduce((a, b) => a + b, 0);
    total += added;
    return { day: keys[i], added, by_type, total };
  });
  return { base: f.growthBase, types: f.types, days };
}

/**
 * Showings and uses come from memory_events (history that outlives deleted
 * memories); the never-shown/never-used shares from the counters of the
 * memories stored now.
 */
export function recallAdoption(f: DashboardFigures, w: Window): RecallAdoption {
  const t = f.recall;
  const keys = dayKeys(w);
  return {
    showings: t.shown,
    uses: t.used,
    uses_per_showing: ratio(t.used, t.shown),
    never_shown: t.neverShown,
    never_used: t.neverUsed,
    never_shown_share: ratio(t.neverShown, t.memories),
    never_used_share: ratio(t.neverUsed, t.memories),
    days: f.recallPerDay.map((d) => ({ day: keys[d.i], showings: d.shown, uses: d.used, uses_per_showing: ratio(d.used, d.shown) })),
  };
}
