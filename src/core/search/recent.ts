import type { MemoryRow } from "../../store/sqlite";
import { toView, type MemoryView } from "../memories";
import { parseLimit, parseProject } from "./search";
import type { Services } from "../services";
import { round3 } from "../memories";
import { DEFAULT_RECENT_LIMIT } from "../tuning";

export interface RecentHit extends MemoryView {
  /** Importance: effective strength, connections and recency combined. */
  score: number;
}

/**
 * GET /recent and memsvc_recent: queryless, ranked by importance (effective
 * strength, connections and recency), exact. The engine computes it where the
 * rows are (see src/store/<engine>/search-recent.ts).
 */
export async function recent(s: Services, input: { project?: unknown; limit?: unknown }): Promise<{ count: number; results: RecentHit[] }> {
  const limit = parseLimit(input.limit, DEFAULT_RECENT_LIMIT);
  const project = parseProject(input.project);
  const now = s.now();
  const rows = await s.storage.search.recent({ now, project, limit });
  const results = rows.map((row) => ({ ...toView(row, now), score: round3(row.importance) }));
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
