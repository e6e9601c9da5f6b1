import type { NewMemoryRow } from "../memories";
import type { Services } from "../services";
import { thresholds } from "../search";
import { LINK_MAX_NEAREST } from "./tuning";

/** Relationship names are short snake_case words ("related", "caused_by", "supersedes"). */
export function normalizeRelationship(raw: string): string {
  return (
    raw
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "_")
      .replace(/^_+|_+$/g, "")
      .slice(0, 40) || "related"
  );
}

/**
 * Adds or re-weights a link (the stronger weight wins). Inside a transaction
 * pass `withStorage(s, tx)` so the link lands with the rest of the write.
 */
export async function addLink(s: Services, fromId: string, toId: string, relationship: string, weight: number): Promise<void> {
  if (fromId === toId) return;
  await s.storage.graph.addLinks([{ fromId, toId, relationship: normalizeRelationship(relationship), weight: Math.max(0, Math.min(1, weight)) }], s.now());
}

/**
 * Links a new memory to its closest existing memories ("related", weight =
 * cosine similarity); call it with `withStorage(s, tx)` inside the write's
 * transaction. `batch`: the memories written with it, never linked by
 * similarity (as on SQLite, where the in-memory index does not hold them
 * until commit; on PostgreSQL they are already visible to pgvector). On
 * SQLite the candidates come from the in-memory index, so call it before the
 * new vectors are added there; on PostgreSQL pgvector finds them inside the
 * same transaction.
 */
export async function linkToNearest(
  s: Services,
  memoryId: string,
  vector: Float32Array,
  project: string | null,
  opts: { minSimilarity?: number; batch?: readonly string[] } = {},
): Promise<number> {
  const minSimilarity = opts.minSimilarity ?? thresholds(s).link;
  const exclude = [...new Set([memoryId, ...(opts.batch ?? [])])];
  const near = s.storage.graph.nearestFromIndex
    ? (await s.storage.search.nearest(vector, LINK_MAX_NEAREST, project))
        .filter((h) => h.similarity >= minSimilarity)
        .map((h) => ({ seq: h.seq, similarity: h.similarity }))
    : null;
  if (near && near.length === 0) return 0;
  return s.storage.graph.linkToNearest({ memoryId, vector, project, limit: LINK_MAX_NEAREST, minSimilarity, exclude, near, now: s.now() });
}

/**
 * Writes one new memory (its row, vector and tags, as memories.insertMemories)
 * and links it as linkToNearest would, in one call where the engine offers it
 * (PostgreSQL: one message, atomic on its own; inside a transaction it joins
 * it); returns its id and seq, or null where the engine
 * does not (SQLite: core's index finds the candidates) and the caller writes
 * and links as before.
 */
export async function insertAndLink(s: Services, row: NewMemoryRow): Promise<{ id: string; seq: number } | null> {
  const graph = s.storage.graph;
  if (!graph.insertAndLink || graph.nearestFromIndex) return null;
  const { seq } = await graph.insertAndLink(row, { limit: LINK_MAX_NEAREST, minSimilarity: thresholds(s).link, exclude: [row.id], now: s.now() });
  return { id: row.id, seq };
}
