import type { MemoryRow } from "../db";
import { toView, type MemoryView } from "./memories";
import { parseLimit, parseProject } from "./search";
import type { Services } from "./services";
import { effectiveStrengthSql, round3 } from "./strength";
import { DEFAULT_RECENT_LIMIT, RECENT_CONNECTION_WEIGHT, RECENT_RECENCY_DAYS, RECENT_RECENCY_WEIGHT, RECENT_STRENGTH_WEIGHT } from "./tuning";

export interface RecentHit extends MemoryView {
  /** Importance: effective strength, connections and recency combined. */
  score: number;
}

const IMPORTANCE = `(${RECENT_STRENGTH_WEIGHT} * ${effectiveStrengthSql()}
  + ${RECENT_CONNECTION_WEIGHT} * ln(1 + link_count)
  + ${RECENT_RECENCY_WEIGHT} * exp(-(max(0, :now - created_at)) / ${RECENT_RECENCY_DAYS * 86_400_000}.0))`;

/** GET /recent and memsvc_recent: queryless, ranked by importance, computed inside SQLite. */
export function recent(s: Services, input: { project?: unknown; limit?: unknown }): { count: number; results: RecentHit[] } {
  const limit = parseLimit(input.limit, DEFAULT_RECENT_LIMIT);
  const project = parseProject(input.project);
  const now = s.now();
  const rows = s.store.sqlite
    .query<MemoryRow & { importance: number }, { now: number; project: string | null; limit: number }>(
      `SELECT *, ${IMPORTANCE} AS importance FROM memories
        WHERE (:project IS NULL OR project = :project)
        ORDER BY importance DESC LIMIT :limit`,
    )
    .all({ now, project, limit });
  const results = rows.map((raw) => {
    const row = fromSql(raw);
    return { ...toView(row, now), score: round3(raw.importance) };
  });
  return { count: results.length, results };
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
