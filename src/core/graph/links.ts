import type { Services } from "../services";
import { thresholds } from "../search";
import { LINK_MAX_NEAREST } from "../tuning";

/** Relationship names are short snake_case words ("related", "caused_by", "supersedes"). */
export function normalizeRelationship(raw: string): string {
  return raw.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 40) || "related";
}

/** Adds or re-weights a link (the stronger weight wins); call inside a transaction. */
export function addLink(s: Services, fromId: string, toId: string, relationship: string, weight: number): void {
  if (fromId === toId) return;
  s.store.sqlite.run(
    `INSERT INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(from_id, to_id, relationship) DO UPDATE SET weight = max(weight, excluded.weight)`,
    [fromId, toId, normalizeRelationship(relationship), Math.max(0, Math.min(1, weight)), s.now()],
  );
}

/**
 * Links a new memory to its closest existing memories ("related", weight =
 * cosine similarity). Uses the in-memory index, so call it before the new
 * vector is added there, inside the write's transaction.
 */
export async function linkToNearest(s: Services, memoryId: string, vector: Float32Array, project: string | null, minSimilarity = thresholds(s).link): Promise<number> {
  const hits = (await s.storage.search.nearest(vector, LINK_MAX_NEAREST, project)).filter((h) => h.similarity >= minSimilarity);
  if (hits.length === 0) return 0;
  const ids = s.store.sqlite
    .query<{ seq: number; id: string }, [string]>("SELECT seq, id FROM memories WHERE seq IN (SELECT value FROM json_each(?))")
    .all(JSON.stringify(hits.map((h) => h.seq)));
  const idOf = new Map(ids.map((r) => [r.seq, r.id]));
  let n = 0;
  for (const h of hits) {
    const other = idOf.get(h.seq);
    if (!other || other === memoryId) continue;
    addLink(s, memoryId, other, "related", h.similarity);
    n++;
  }
  return n;
}
