import { currentSnapshot, liveIndex, recordVersion } from "../memories";
import { deriveTags } from "../memories/tags";
import type { NewMemoryRow } from "../memories";
import { mergedContent } from "../distill";
import type { NewLink } from "../graph";
import type { VectorHit } from "../search";
import type { Services } from "../services";
import { withStorage } from "../storage";
import { DISTILL_MERGE_BOOST } from "../distill/tuning";
import { LINK_MAX_NEAREST } from "../graph/tuning";
import { INITIAL_STRENGTH, MAX_STRENGTH } from "../memories/tuning";
import { IMPORT_EMBED_BATCH } from "./tuning";
import type { ImportItem } from "./types";

const cosine = (a: Float32Array, b: Float32Array) => {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += a[i] * b[i];
  return d;
};

type Plan =
  | { kind: "insert"; extends?: { id: string; similarity: number } }
  | { kind: "merge"; targetId: string; content: string | null; vector: Float32Array | null }
  | { kind: "same-as"; other: number };

/**
 * Embeds (the items whose vector the preparer did not bring), plans and writes
 * one batch in one transaction; the index learns it after commit.
 */
export async function writeBatch(
  s: Services,
  batch: ImportItem[],
  given: (Float32Array | undefined)[],
  mergeAt: number,
  linkAt: number,
): Promise<{ ids: (string | null)[]; inserted: number; merged: number }> {
  const vectors: Float32Array[] = [];
  if (given.every((v) => v !== undefined)) vectors.push(...(given as Float32Array[]));
  else
    for (let i = 0; i < batch.length; i += IMPORT_EMBED_BATCH)
      vectors.push(
        ...(await s.embedder.embed(
          batch.slice(i, i + IMPORT_EMBED_BATCH).map((it) => it.content),
          "document",
        )),
      );

  // Plan outside the transaction, as distill does (the index holds every earlier batch).
  // One after another: on PostgreSQL each is a query, and the pool is small.
  // Only hits at a threshold count (merge or link): an engine that can leaves the rest out.
  const least = Math.min(mergeAt, linkAt);
  const queries = batch.map((it, i) => ({ vector: vectors[i], k: it.project === null ? 10 : Math.max(3, LINK_MAX_NEAREST), project: it.project }));
  let hits: VectorHit[][] = [];
  if (s.storage.search.nearestMany) hits = await s.storage.search.nearestMany(queries, least);
  else for (const q of queries) hits.push(await s.storage.search.nearest(q.vector, q.k, q.project));
  const hitSeqs = [...new Set(hits.flat().flatMap((h) => (h.similarity >= least ? [h.seq] : [])))];
  const rowOf = new Map((hitSeqs.length ? await s.storage.distill.memoriesBySeq(hitSeqs) : []).map((r) => [r.seq, r]));
  const plans: Plan[] = [];
  const claimed = new Map<string, number>();
  const rewrites: Extract<Plan, { kind: "merge" }>[] = [];
  // Earlier items of the batch that are not themselves twins, by project, in batch order: the
  // first one similar enough is the twin (a scan of every earlier plan was ~0.1 ms an item).
  const sameProject = new Map<string | null, number[]>();
  const planOf = (i: number, peers: number[]): Plan => {
    const v = vectors[i];
    const twin = peers.find((j) => cosine(vectors[j], v) >= mergeAt);
    if (twin !== undefined) return { kind: "same-as", other: twin };
    const hit = hits[i].find((h) => h.similarity >= mergeAt && rowOf.get(h.seq)?.project === batch[i].project);
    const row = hit && rowOf.get(hit.seq);
    if (!hit || !row) return { kind: "insert" };
    const earlier = claimed.get(row.id);
    if (earlier !== undefined) return { kind: "same-as", other: earlier };
    const content = mergedContent(row.content, batch[i].content);
    if (content === "separate") return { kind: "insert", extends: { id: row.id, similarity: hit.similarity } };
    const plan: Extract<Plan, { kind: "merge" }> = { kind: "merge", targetId: row.id, content, vector: null };
    claimed.set(row.id, i);
    if (content !== null) rewrites.push(plan);
    return plan;
  };
  for (let i = 0; i < batch.length; i++) {
    let peers = sameProject.get(batch[i].project);
    if (!peers) sameProject.set(batch[i].project, (peers = []));
    const plan = planOf(i, peers);
    plans.push(plan);
    if (plan.kind !== "same-as") peers.push(i);
  }
  if (rewrites.length) {
    const out = await s.embedder.embed(
      rewrites.map((r) => r.content!),
      "document",
    );
    rewrites.forEach((r, k) => {
      r.vector = out[k];
    });
  }

  const now = s.now();
  const ids: (string | null)[] = new Array(batch.length).fill(null);
  const result = await s.storage.transaction(async (tx) => {
    const ts = withStorage(s, tx);
    const inserts: number[] = [];
    const reindex: { seq: number; vector: Float32Array; project: string | null }[] = [];
    let merged = 0;
    for (const [i, p] of plans.entries()) {
      if (p.kind === "insert") inserts.push(i);
      if (p.kind !== "merge") continue;
      const target = await tx.distill.mergeTarget(p.targetId);
      if (!target) {
        inserts.push(i);
        continue;
      }
      const strength = Math.min(MAX_STRENGTH, target.strength + DISTILL_MERGE_BOOST);
      if (p.content !== null && p.vector) {
        const prior = await currentSnapshot(ts, p.targetId);
        if (prior && prior.content !== p.content) await recordVersion(ts, p.targetId, prior, "distill", null, now);
        await tx.distill.rewrite(target.seq, p.content, p.vector, strength, now);
        reindex.push({ seq: target.seq, vector: p.vector, project: batch[i].project });
      } else {
        await tx.distill.strengthen(target.seq, strength, now);
      }
      ids[i] = p.targetId;
      merged++;
    }
    inserts.sort((a, b) => a - b);
    const rows: NewMemoryRow[] = inserts.map((i) => {
      const it = batch[i];
      return {
        id: crypto.randomUUID(),
        content: it.content,
        memoryType: it.memoryType,
        project: it.project,
        sourceAgent: it.sourceAgent,
        sourceAgentId: null,
        sourceDomain: null,
        sourceSession: it.provenance.slice(0, 500),
        privacy: "WORK",
        createdAt: it.createdAt,
        updatedAt: it.updatedAt ?? now,
        refreshedAt: Math.max(it.createdAt, now),
        strength: Math.min(MAX_STRENGTH, it.strength ?? INITIAL_STRENGTH),
        vector: vectors[i],
        tags: deriveTags(it.project, it.tags),
      };
    });
    const seqs = rows.length ? await tx.memories.insertMemories(rows) : [];
    const batchIds = rows.map((r) => r.id);
    const near = (i: number) => hits[i].filter((h) => h.similarity >= linkAt).slice(0, LINK_MAX_NEAREST);
    const extendsLink = (k: number, i: number): NewLink[] => {
      const ext = (plans[i] as Extract<Plan, { kind: "insert" }>).extends;
      return ext ? [{ fromId: rows[k].id, toId: ext.id, relationship: "extends", weight: Math.max(0, Math.min(1, ext.similarity)) }] : [];
    };
    for (const [k, i] of inserts.entries()) {
      ids[i] = rows[k].id;
      reindex.push({ seq: seqs[k], vector: vectors[i], project: batch[i].project });
    }
    if (tx.graph.nearestFromIndex) {
      // The similarity links ingest makes (linkToNearest's rule), from the hits already found (the
      // index has no batch member yet), and the extends links: the whole batch's in one addLinks, which
      // an engine writes in bulk. Ids read in the transaction: a neighbour deleted since is left out.
      const neighbours = [...new Set(inserts.flatMap((i) => near(i).map((h) => h.seq)))];
      const idOfSeq = new Map((neighbours.length ? await tx.memories.memoriesBySeq(neighbours) : []).map((r) => [r.seq, r.id]));
      const skip = new Set(batchIds);
      const links: NewLink[] = [];
      for (const [k, i] of inserts.entries()) {
        for (const h of near(i)) {
          const other = idOfSeq.get(h.seq);
          if (other && !skip.has(other))
            links.push({ fromId: rows[k].id, toId: other, relationship: "related", weight: Math.max(0, Math.min(1, h.similarity)) });
        }
        links.push(...extendsLink(k, i));
      }
      if (links.length) await tx.graph.addLinks(links, now);
    } else {
      // Engines whose nearest neighbours are a query of their own (PostgreSQL) link row by row.
      for (const [k, i] of inserts.entries()) {
        await tx.graph.linkToNearest({
          memoryId: rows[k].id,
          vector: vectors[i],
          project: batch[i].project,
          limit: LINK_MAX_NEAREST,
          minSimilarity: linkAt,
          exclude: batchIds,
          near: null,
          now,
        });
        const ext = extendsLink(k, i);
        if (ext.length) await tx.graph.addLinks(ext, now);
      }
    }
    return { inserted: rows.length, merged, reindex };
  });
  plans.forEach((p, i) => {
    if (p.kind === "same-as") {
      ids[i] = ids[p.other];
      result.merged++;
    }
  });
  const index = liveIndex(s);
  if (index) for (const u of result.reindex) index.upsert(u.seq, u.vector, u.project);
  return { ids, inserted: result.inserted, merged: result.merged };
}
