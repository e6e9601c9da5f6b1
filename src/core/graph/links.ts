import type { Services } from "../services";
import type { Storage } from "../storage";
import { thresholds } from "../search";
import { LINK_MAX_NEAREST } from "../tuning";

/** Relationship names are short snake_case words ("related", "caused_by", "supersedes"). */
export function normalizeRelationship(raw: string): string {
  return raw.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 40) || "related";
}

/**
 * Adds or re-weights a link (the stronger weight wins). `tx` is the storage of
 * the caller's transaction (`s.storage.transaction(async (tx) => ...)`), or
 * `s.storage` for a link written on its own.
 *
 * Not `async` on purpose: nothing is awaited before the store call, so on
 * SQLite the statement runs during the call and a bad link throws at once;
 * a caller still inside a synchronous SQLite transaction keeps both.
 */
export function addLink(s: Services, tx: Storage, fromId: string, toId: string, relationship: string, weight: number): Promise<void> {
  if (fromId === toId) return Promise.resolve();
  return tx.graph.addLinks([{ fromId, toId, relationship: normalizeRelationship(relationship), weight: Math.max(0, Math.min(1, weight)) }], s.now());
}

/**
 * Links a new memory to its closest existing memories ("related", weight =
 * cosine similarity), inside the write's transaction (`tx`). On SQLite the
 * candidates come from the in-memory index, so call it before the new vector
 * is added there; on PostgreSQL pgvector finds them in the same transaction.
 * Not `async`, for the same reason as addLink.
 */
export function linkToNearest(s: Services, tx: Storage, memoryId: string, vector: Float32Array, project: string | null, minSimilarity = thresholds(s).link): Promise<number> {
  const near = tx.graph.nearestFromIndex
    ? s.index
        .search(vector, LINK_MAX_NEAREST, project)
        .filter((h) => h.similarity >= minSimilarity)
        .map((h) => ({ seq: h.seq, similarity: h.similarity }))
    : null;
  if (near && near.length === 0) return Promise.resolve(0);
  return tx.graph.linkToNearest({ memoryId, vector, project, limit: LINK_MAX_NEAREST, minSimilarity, near, now: s.now() });
}
