import type { MemoryRow } from "../memories";
import { toView, type MemoryView } from "../memories";
import { parseLimit, parseProject } from "./search";
import type { Services } from "../services";
import type { RecentInput } from "./schema";
import { effectiveStrength, round3 } from "../memories";
import { DEFAULT_RECENT_LIMIT, RECENT_CONNECTION_WEIGHT, RECENT_RECENCY_DAYS, RECENT_RECENCY_WEIGHT, RECENT_STRENGTH_WEIGHT } from "./tuning";

export interface RecentHit extends MemoryView {
  /** Importance: effective strength, connections and recency combined. */
  score: number;
}

/**
 * GET /recent and memsvc_recent: queryless, ranked by importance (effective
 * strength, connections and recency), exact. The engine computes it where the
 * rows are (see src/store/<engine>/search-recent.ts).
 */
export async function recent(s: Services, input: RecentInput): Promise<{ count: number; results: RecentHit[] }> {
  const limit = parseLimit(input.limit, DEFAULT_RECENT_LIMIT);
  const project = parseProject(input.project);
  const now = s.now();
  const rows = await s.storage.search.recent({ now, project, limit });
  const results = rows.map((row) => ({ ...toView(row, now), score: round3(row.importance) }));
  return { count: results.length, results };
}

/**
 * The most importance a row could have whose strength, link count and
 * creation time are at most these (effective strength never exceeds stored
 * strength; the other terms are monotone): engines prove a candidate list
 * holds the exact top when its k-th row beats this.
 */
export function importanceBound(strength: number, links: number, createdAt: number, now: number): number {
  return (
    RECENT_STRENGTH_WEIGHT * strength +
    RECENT_CONNECTION_WEIGHT * Math.log(1 + links) +
    RECENT_RECENCY_WEIGHT * Math.exp(-Math.max(0, now - createdAt) / (RECENT_RECENCY_DAYS * 86_400_000))
  );
}

/**
 * The most importance a row could have that was created and refreshed no
 * later than `touched`, with at most these strength and link count: both
 * time terms only fall with age (effective strength's decay, recency's fade),
 * so they are at their largest at `touched`. The SQLite engine's /recent walk
 * stops once its k-th row beats this for the values where its three sorted
 * lists stand (every row none of them has reached is at or below all three).
 * `maxStrength` must be at least 0: a negative strength's effective strength
 * is largest fully decayed, not at `touched`.
 */
export function touchedBound(maxStrength: number, maxLinks: number, touched: number, now: number): number {
  return importanceBound(effectiveStrength(maxStrength, touched, now), maxLinks, touched, now);
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
