import type { MemoryRow } from "../../store/sqlite";
import { toView, type MemoryView } from "../memories";
import { parseLimit, parseProject } from "./search";
import type { Services } from "../services";
import { effectiveStrengthSql, round3 } from "../memories";
import { DEFAULT_RECENT_LIMIT, RECENT_CANDIDATES, RECENT_CONNECTION_WEIGHT, RECENT_RECENCY_DAYS, RECENT_RECENCY_WEIGHT, RECENT_STRENGTH_WEIGHT } from "../tuning";

export interface RecentHit extends MemoryView {
  /** Importance: effective strength, connections and recency combined. */
  score: number;
}

const IMPORTANCE = `(${RECENT_STRENGTH_WEIGHT} * ${effectiveStrengthSql()}
  + ${RECENT_CONNECTION_WEIGHT} * ln(1 + link_count)
  + ${RECENT_RECENCY_WEIGHT} * exp(-(max(0, :now - created_at)) / ${RECENT_RECENCY_DAYS * 86_400_000}.0))`;

type Ranked = MemoryRow & { importance: number };
type Params = { now: number; project: string | null; limit: number };

/**
 * GET /recent and memsvc_recent: queryless, ranked by importance, computed
 * inside SQLite. Importance only grows with strength, links and creation
 * time, so a threshold search over three index-sorted lists finds the top
 * rows without scoring the whole store: once the k-th best candidate beats
 * what any unseen row could reach, the answer is exact.
 */
export function recent(s: Services, input: { project?: unknown; limit?: unknown }): { count: number; results: RecentHit[] } {
  const limit = parseLimit(input.limit, DEFAULT_RECENT_LIMIT);
  const project = parseProject(input.project);
  const now = s.now();
  const params = { now, project, limit };
  const rows = fromCandidates(s, params) ?? scoreAll(s, params);
  const results = rows.map((raw) => ({ ...toView(fromSql(raw), now), score: round3(raw.importance) }));
  return { count: results.length, results };
}

const WHERE_PROJECT = "(:project IS NULL OR project = :project)";

/** Scores every row (of the project): the reference answer, and the fallback. */
export function scoreAll(s: Services, p: Params): Ranked[] {
  // The inner scan reads only the covering index memories_rank; full rows are read for the winners.
  return s.store.sqlite
    .query<Ranked, Params>(
      `SELECT m.*, t.importance FROM (SELECT seq, ${IMPORTANCE} AS importance FROM memories WHERE ${WHERE_PROJECT} ORDER BY importance DESC, seq DESC LIMIT :limit) t
         JOIN memories m ON m.seq = t.seq ORDER BY t.importance DESC, t.seq DESC`,
    )
    .all(p);
}

/** The top rows from the candidate lists, or null when they cannot be proven to be the top. */
export function fromCandidates(s: Services, p: Params): Ranked[] | null {
  // Two spellings so the planner walks (column) or (project, column) in order and stops at :n.
  const lists = (["strength", "link_count", "created_at"] as const).map((column) =>
    p.project === null
      ? s.store.sqlite.query<{ seq: number; v: number }, { n: number }>(`SELECT seq, ${column} AS v FROM memories ORDER BY ${column} DESC LIMIT :n`).all({ n: RECENT_CANDIDATES })
      : s.store.sqlite
          .query<{ seq: number; v: number }, { project: string; n: number }>(`SELECT seq, ${column} AS v FROM memories WHERE project = :project ORDER BY ${column} DESC LIMIT :n`)
          .all({ project: p.project, n: RECENT_CANDIDATES }),
  );
  // A list shorter than asked holds every row: scoring all of them is as cheap.
  if (lists.some((l) => l.length < RECENT_CANDIDATES)) return null;
  const [strength, links, created] = lists.map((l) => l[l.length - 1].v);
  // Effective strength never exceeds stored strength; the other terms are monotone.
  const unseenBound =
    RECENT_STRENGTH_WEIGHT * strength +
    RECENT_CONNECTION_WEIGHT * Math.log(1 + links) +
    RECENT_RECENCY_WEIGHT * Math.exp(-Math.max(0, p.now - created) / (RECENT_RECENCY_DAYS * 86_400_000));
  const seqs = [...new Set(lists.flat().map((r) => r.seq))];
  const top = s.store.sqlite
    .query<Ranked, { now: number; limit: number; seqs: string }>(
      `SELECT *, ${IMPORTANCE} AS importance FROM memories WHERE seq IN (SELECT value FROM json_each(:seqs)) ORDER BY importance DESC, seq DESC LIMIT :limit`,
    )
    .all({ now: p.now, limit: p.limit, seqs: JSON.stringify(seqs) });
  // Strictly above: an unseen row tying the last one could win the seq tie-break.
  return top.length === p.limit && top[top.length - 1].importance > unseenBound ? top : null;
}

// Raw SELECT * rows carry SQL column names; map them to the drizzle row shape.
export function fromSql(r: Record<string, any>): MemoryRow {
  return {
    seq: r.seq,
    id: r.id,
    content: r.content,
    memoryType: r.memory_type,
    project: r.project,
    sourceAgent: r.source_agent,
    sourceAgentId: r.source_agent_id,
    sourceDomain: r.source_domain,
    sourceSession: r.source_session,
    privacy: r.privacy,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    refreshedAt: r.refreshed_at,
    strength: r.strength,
    shownCount: r.shown_count,
    usedCount: r.used_count,
    lastShownAt: r.last_shown_at,
    lastUsedAt: r.last_used_at,
    linkCount: r.link_count,
  };
}
