import type { Database } from "bun:sqlite";
import { effectiveStrengthSql } from "../../core/memories";
import { fromSql, importanceBound } from "../../core/search/recent";
import type { RankedRow } from "../../core/search/store";
import { RECENT_CANDIDATES, RECENT_CONNECTION_WEIGHT, RECENT_RECENCY_DAYS, RECENT_RECENCY_WEIGHT, RECENT_STRENGTH_WEIGHT } from "../../core/tuning";

/**
 * GET /recent on SQLite: importance computed inside SQLite. Importance only
 * grows with strength, links and creation time, so a threshold search over
 * three index-sorted lists finds the top rows without scoring the whole
 * store: once the k-th best candidate beats what any unseen row could reach,
 * the answer is exact; otherwise every row (of the project) is scored.
 */
const IMPORTANCE = `(${RECENT_STRENGTH_WEIGHT} * ${effectiveStrengthSql()}
  + ${RECENT_CONNECTION_WEIGHT} * ln(1 + link_count)
  + ${RECENT_RECENCY_WEIGHT} * exp(-(max(0, :now - created_at)) / ${RECENT_RECENCY_DAYS * 86_400_000}.0))`;

export type RecentParams = { now: number; project: string | null; limit: number };
type Raw = Record<string, any> & { importance: number };

const WHERE_PROJECT = "(:project IS NULL OR project = :project)";

export function recentRows(sqlite: Database, p: RecentParams): RankedRow[] {
  return (fromCandidates(sqlite, p) ?? scoreAll(sqlite, p)).map((r) => ({ ...fromSql(r), importance: r.importance }));
}

/** Scores every row (of the project): the reference answer, and the fallback. */
export function scoreAll(sqlite: Database, p: RecentParams): Raw[] {
  // The inner scan reads only the covering index memories_rank; full rows are read for the winners.
  return sqlite
    .query<Raw, RecentParams>(
      `SELECT m.*, t.importance FROM (SELECT seq, ${IMPORTANCE} AS importance FROM memories WHERE ${WHERE_PROJECT} ORDER BY importance DESC, seq DESC LIMIT :limit) t
         JOIN memories m ON m.seq = t.seq ORDER BY t.importance DESC, t.seq DESC`,
    )
    .all(p);
}

/** The top rows from the candidate lists, or null when they cannot be proven to be the top. */
export function fromCandidates(sqlite: Database, p: RecentParams): Raw[] | null {
  // Two spellings so the planner walks (column) or (project, column) in order and stops at :n.
  const lists = (["strength", "link_count", "created_at"] as const).map((column) =>
    p.project === null
      ? sqlite.query<{ seq: number; v: number }, { n: number }>(`SELECT seq, ${column} AS v FROM memories ORDER BY ${column} DESC LIMIT :n`).all({ n: RECENT_CANDIDATES })
      : sqlite
          .query<{ seq: number; v: number }, { project: string; n: number }>(`SELECT seq, ${column} AS v FROM memories WHERE project = :project ORDER BY ${column} DESC LIMIT :n`)
          .all({ project: p.project, n: RECENT_CANDIDATES }),
  );
  // A list shorter than asked holds every row: scoring all of them is as cheap.
  if (lists.some((l) => l.length < RECENT_CANDIDATES)) return null;
  const [strength, links, created] = lists.map((l) => l[l.length - 1].v);
  const unseenBound = importanceBound(strength, links, created, p.now);
  const seqs = [...new Set(lists.flat().map((r) => r.seq))];
  const top = sqlite
    .query<Raw, { now: number; limit: number; seqs: string }>(
      `SELECT *, ${IMPORTANCE} AS importance FROM memories WHERE seq IN (SELECT value FROM json_each(:seqs)) ORDER BY importance DESC, seq DESC LIMIT :limit`,
    )
    .all({ now: p.now, limit: p.limit, seqs: JSON.stringify(seqs) });
  // Strictly above: an unseen row tying the last one could win the seq tie-break.
  return top.length === p.limit && top[top.length - 1].importance > unseenBound ? top : null;
}
