import type { Database } from "bun:sqlite";
import { effectiveStrengthSql } from "../../core/memories";
import { fromSql, touchedBound } from "../../core/search/recent";
import type { RankedRow } from "../../core/search/store";
import { RECENT_CONNECTION_WEIGHT, RECENT_RECENCY_DAYS, RECENT_RECENCY_WEIGHT, RECENT_STRENGTH_WEIGHT, RECENT_WALK_FIRST } from "../../core/tuning";

/**
 * GET /recent on SQLite: importance computed inside SQLite, exact. Both time
 * terms of importance (strength decays from refreshed_at, recency fades from
 * created_at) only fall as the later of the two times (`touched`) gets older,
 * and strength and link count are at most the store's maxima; so only the
 * rows touched after some time can reach a known floor, and the index of
 * `touched` (migration 0012) reads just those (walkTouched). scoreAll, which
 * scores every row, is the reference the tests compare it with.
 */
const IMPORTANCE = `(${RECENT_STRENGTH_WEIGHT} * ${effectiveStrengthSql()}
  + ${RECENT_CONNECTION_WEIGHT} * ln(1 + link_count)
  + ${RECENT_RECENCY_WEIGHT} * exp(-(max(0, :now - created_at)) / ${RECENT_RECENCY_DAYS * 86_400_000}.0))`;
/** Spelled as in migration 0012's indexes, or the planner will not use them. */
const TOUCHED = "max(created_at, refreshed_at)";

export type RecentParams = { now: number; project: string | null; limit: number };
type Raw = Record<string, any> & { importance: number };

const WHERE_PROJECT = "(:project IS NULL OR project = :project)";

export function recentRows(sqlite: Database, p: RecentParams): RankedRow[] {
  const top = walkTouched(sqlite, p);
  return top.map((r) => ({ ...fromSql(r), importance: r.importance }));
}

/** Scores every row (of the project): the reference answer, and the fallback. */
export function scoreAll(sqlite: Database, p: RecentParams): Raw[] {
  // The inner scan reads only a covering index (memories_project_touched holds every column importance reads); full rows are read for the winners.
  return sqlite
    .query<Raw, RecentParams>(
      `SELECT m.*, t.importance FROM (SELECT seq, ${IMPORTANCE} AS importance FROM memories WHERE ${WHERE_PROJECT} ORDER BY importance DESC, seq DESC LIMIT :limit) t
         JOIN memories m ON m.seq = t.seq ORDER BY t.importance DESC, t.seq DESC`,
    )
    .all(p);
}

/** The statements of one walk: all memories, or one project's (two spellings, so each uses its index). */
function walkStatements(sqlite: Database, project: string | null) {
  const only = project === null ? "" : "WHERE project = :project";
  const and = project === null ? "" : "project = :project AND";
  const extra: Record<string, string> = project === null ? {} : { project };
  const best = (window: string) =>
    sqlite.query<Raw, Record<string, number | string>>(
      `SELECT m.*, t.importance FROM (SELECT seq, importance FROM (SELECT seq, ${IMPORTANCE} AS importance FROM memories ${window}) ORDER BY importance DESC, seq DESC LIMIT :limit) t
         JOIN memories m ON m.seq = t.seq ORDER BY t.importance DESC, t.seq DESC`,
    );
  // The :n most recently touched rows, read from the covering index memories_(project_)touched.
  const newest = best(`${only} ORDER BY ${TOUCHED} DESC LIMIT :n`);
  // Every row touched since :since that could reach :floor: importance is at most
  // W_S*strength + W_C*ln(1 + links) + W_R, and ln(1 + x) <= x, so this cheap test
  // (no pow, exp or ln) lets through every row that can reach the floor.
  const since = best(
    `WHERE ${and} ${TOUCHED} > :since AND ${RECENT_STRENGTH_WEIGHT} * max(strength, 0) + ${RECENT_CONNECTION_WEIGHT} * link_count + ${RECENT_RECENCY_WEIGHT} >= :floor`,
  );
  const maxima = sqlite.query<{ s: number | null; l: number | null }, {}>(
    `SELECT (SELECT max(strength) FROM memories ${only}) AS s, (SELECT max(link_count) FROM memories ${only}) AS l`,
  );
  return {
    newest: (q: { now: number; limit: number; n: number }) => newest.all({ ...q, ...extra }),
    since: (q: { now: number; limit: number; since: number; floor: number }) => since.all({ ...q, ...extra }),
    maxima: () => maxima.get(extra)!,
  };
}

/** Slack for SQLite's and JavaScript's pow/exp/ln disagreeing in the last bits: the walk widens, never narrows, by it. */
const SLACK = 1e-9;

/**
 * The exact top rows in two reads. The newest RECENT_WALK_FIRST rows give a
 * floor: the k-th best among them (the answer's k-th is at least that). A row
 * touched before `since` cannot reach the floor (touchedBound with the
 * store's maximal strength and link count), so the answer is the best of the
 * rows touched since then that pass a cheap necessary test.
 */
export function walkTouched(sqlite: Database, p: RecentParams): Raw[] {
  const q = walkStatements(sqlite, p.project);
  const first = q.newest({ now: p.now, limit: p.limit, n: Math.max(RECENT_WALK_FIRST, p.limit) });
  // Fewer rows than asked: the window held them all.
  if (first.length < p.limit || p.limit === 0) return first;
  const floor = first[first.length - 1].importance - SLACK;
  // A NULL importance (a value no write path stores, e.g. a negative link count) proves nothing: score every row.
  if (!Number.isFinite(floor)) return scoreAll(sqlite, p);
  const { s, l } = q.maxima();
  const maxStrength = Math.max(0, s ?? 0);
  const maxLinks = Math.max(0, l ?? 0);
  const bound = (t: number) => touchedBound(maxStrength, maxLinks, t, p.now);
  // The latest touched time whose bound stays below the floor (the bound only grows with time): rows touched then or earlier cannot make it.
  let lo = -8.64e15;
  let hi = p.now;
  if (bound(lo) >= floor) return q.since({ now: p.now, limit: p.limit, since: -Number.MAX_VALUE, floor });
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (bound(mid) >= floor) hi = mid;
    else lo = mid;
  }
  return q.since({ now: p.now, limit: p.limit, since: lo, floor });
}
