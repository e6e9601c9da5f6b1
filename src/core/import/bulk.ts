import { currentSnapshot, liveIndex, normalizeMemoryType, recordVersion } from "../memories";
import { MAX_CONTENT_CHARS } from "../memories/memories";
import { deriveTags } from "../memories/tags";
import type { NewMemoryRow } from "../memories";
import { mergedContent } from "../distill";
import { normalizeRelationship, type NewLink } from "../graph";
import { loadThresholds, thresholds, type VectorHit } from "../search";
import { redact } from "../secrets";
import type { Services } from "../services";
import { withStorage } from "../storage";
import { DISTILL_MERGE_BOOST } from "../distill/tuning";
import { LINK_MAX_NEAREST } from "../graph/tuning";
import { INITIAL_STRENGTH, MAX_STRENGTH } from "../memories/tuning";
import { IMPORT_BATCH, IMPORT_EMBED_BATCH, IMPORT_LINK_BATCH, IMPORT_SAMPLE } from "./tuning";
import type { ImportItem, SourceProblem } from "./types";

export interface ImportOptions {
  dryRun?: boolean;
  progress?: (done: number, total: number, label: string) => void;
}

export interface ImportOutcome {
  /** Items the sources yielded. */
  read: number;
  added: number;
  /** Near-duplicates of a memory (or of an earlier item) merged into it, as distill merges. */
  merged: number;
  /** Items left after exact repeats: what --dry-run calls new (some may still merge). */
  candidates: number;
  /** Exact repeats (same project, same text) of a memory already there or of an earlier item. */
  skipped: number;
  /** Named links (wikilinks, relations, sessions) written with at least one new end. */
  links: number;
  /** Named links whose target is in neither the import nor the store. */
  unresolved: number;
  dryRun: boolean;
  sample: { content: string; memory_type: string; project: string | null; source_agent: string; provenance: string }[];
  problems: SourceProblem[];
}

/** The exact-duplicate key: project and text, case and spacing aside. */
const hashOf = (project: string | null, content: string) => Bun.hash.wyhash(`${project ?? ""}\u0000${content.toLowerCase().replace(/\s+/g, " ").trim()}`);

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
 * The one write path of every import: redacts each item, skips exact repeats
 * (a hash of project and text, against the store and the import itself),
 * merges near-duplicates by distill's rule (same project, similarity at the
 * calibrated distill-merge threshold: strengthened, or rewritten with the old
 * text kept as a version), inserts the rest with their vectors, tags and
 * similarity links, IMPORT_BATCH items per transaction, and finally writes the
 * links the sources named between items (by key). A failure in a batch rolls
 * that batch back; batches before it stay, and a re-run skips them.
 */
export async function importItems(s: Services, input: readonly ImportItem[], opts: ImportOptions = {}): Promise<ImportOutcome> {
  const progress = opts.progress ?? (() => {});
  const p = await prepareImport((after, limit) => s.storage.memories.reembedRows(after, limit), input, opts.dryRun === true);
  const { items, repeatOf, fresh, outcome } = p;
  if (opts.dryRun) return outcome;

  await loadThresholds(s);
  const th = thresholds(s);
  const finalId: (string | null)[] = new Array(items.length).fill(null);
  progress(0, fresh.length, "importing");
  for (let start = 0; start < fresh.length; start += IMPORT_BATCH) {
    const batch = fresh.slice(start, start + IMPORT_BATCH);
    const r = await writeBatch(
      s,
      batch.map((i) => items[i]),
      th.distillMerge,
      th.link,
    );
    batch.forEach((i, k) => {
      finalId[i] = r.ids[k];
    });
    outcome.added += r.inserted;
    outcome.merged += r.merged;
    progress(Math.min(start + IMPORT_BATCH, fresh.length), fresh.length, "importing");
  }

  // Repeats of stored memories: their ids, so links to and from them land.
  const seqs = repeatOf.flatMap((r) => (r && "seq" in r ? [r.seq] : []));
  const idOfSeq = new Map<number, string>();
  for (let i = 0; i < seqs.length; i += 5000) for (const row of await s.storage.distill.memoriesBySeq(seqs.slice(i, i + 5000))) idOfSeq.set(row.seq, row.id);
  const idOf = (i: number): string | null => {
    const r = repeatOf[i];
    if (!r) return finalId[i];
    return "seq" in r ? (idOfSeq.get(r.seq) ?? null) : finalId[r.item];
  };
  const isNew = new Set(fresh.map((i) => finalId[i]).filter((x): x is string => x !== null));
  const byKey = new Map<string, string>();
  items.forEach((it, i) => {
    const id = idOf(i);
    if (id) for (const k of it.keys) if (!byKey.has(k)) byKey.set(k, id);
  });
  const links = new Map<string, NewLink>();
  items.forEach((it, i) => {
    const from = idOf(i);
    if (!from) return;
    for (const l of it.links) {
      const to = byKey.get(l.to);
      if (!to) {
        outcome.unresolved++;
        continue;
      }
      if (to === from) continue;
      const relationship = normalizeRelationship(l.relationship);
      const key = `${from}\u0000${to}\u0000${relationship}`;
      const weight = Math.max(0, Math.min(1, l.weight ?? 0.9));
      if ((links.get(key)?.weight ?? -1) < weight) links.set(key, { fromId: from, toId: to, relationship, weight });
    }
  });
  const all = [...links.values()];
  outcome.links = all.filter((l) => isNew.has(l.fromId) || isNew.has(l.toId)).length;
  // Idempotent (the stronger weight wins): links between repeats are written again harmlessly.
  for (let i = 0; i < all.length; i += IMPORT_LINK_BATCH) {
    const chunk = all.slice(i, i + IMPORT_LINK_BATCH);
    await s.storage.transaction((tx) => tx.graph.addLinks(chunk, s.now()));
  }
  return outcome;
}

/** Stored memories page by page (seq order), as reembedRows reads them; an empty list ends. */
export type StoredRows = (afterSeq: number, limit: number) => Promise<{ seq: number; content: string; project: string | null }[]>;

/**
 * Redacts and checks the items and finds exact repeats; all --dry-run needs
 * (it reads the store, writes nothing; `rows` answering [] stands for an
 * empty or not yet created home).
 */
export async function prepareImport(rows: StoredRows, input: readonly ImportItem[], dryRun = false) {
  const problems: SourceProblem[] = [];
  const items: ImportItem[] = [];
  for (const it of input) {
    const content = (await redact(it.content)).trim();
    if (!content.replace(/[\p{Cc}\p{Cf}\s]/gu, "")) continue;
    if (content.length > MAX_CONTENT_CHARS) {
      problems.push({ source: it.provenance, message: `longer than ${MAX_CONTENT_CHARS} characters; left out` });
      continue;
    }
    items.push({
      ...it,
      content,
      createdAt: Math.round(it.createdAt),
      memoryType: normalizeMemoryType(it.memoryType),
      project: it.project?.trim().slice(0, 200) || null,
      sourceAgent: it.sourceAgent.slice(0, 200),
    });
  }

  // Exact repeats: of what the store holds (read once, seq by hash), then of earlier items.
  const existing = new Map<bigint, number>();
  for (let after = 0; ; ) {
    const page = await rows(after, 10_000);
    if (page.length === 0) break;
    for (const r of page) existing.set(hashOf(r.project, r.content), r.seq);
    after = page[page.length - 1].seq;
  }
  const firstOf = new Map<bigint, number>();
  /** Per item: null when new, else the store seq or earlier item it repeats. */
  const repeatOf: ({ seq: number } | { item: number } | null)[] = items.map((it, i) => {
    const h = hashOf(it.project, it.content);
    const seq = existing.get(h);
    if (seq !== undefined) return { seq };
    const first = firstOf.get(h);
    if (first !== undefined) return { item: first };
    firstOf.set(h, i);
    return null;
  });
  const fresh = items.map((_, i) => i).filter((i) => repeatOf[i] === null);
  const outcome: ImportOutcome = {
    read: input.length,
    added: 0,
    merged: 0,
    candidates: fresh.length,
    skipped: items.length - fresh.length,
    links: 0,
    unresolved: 0,
    dryRun,
    sample: fresh.slice(0, IMPORT_SAMPLE).map((i) => ({
      content: items[i].content,
      memory_type: items[i].memoryType,
      project: items[i].project,
      source_agent: items[i].sourceAgent,
      provenance: items[i].provenance,
    })),
    problems,
  };
  return { items, repeatOf, fresh, outcome };
}

/** Embeds, plans and writes one batch in one transaction; the index learns it after commit. */
async function writeBatch(
  s: Services,
  batch: ImportItem[],
  mergeAt: number,
  linkAt: number,
): Promise<{ ids: (string | null)[]; inserted: number; merged: number }> {
  const vectors: Float32Array[] = [];
  for (let i = 0; i < batch.length; i += IMPORT_EMBED_BATCH)
    vectors.push(
      ...(await s.embedder.embed(
        batch.slice(i, i + IMPORT_EMBED_BATCH).map((it) => it.content),
        "document",
      )),
    );

  // Plan outside the transaction, as distill does (the index holds every earlier batch).
  // One after another: on PostgreSQL each is a query, and the pool is small.
  const hits: VectorHit[][] = [];
  for (const [i, it] of batch.entries())
    hits.push(await s.storage.search.nearest(vectors[i], it.project === null ? 10 : Math.max(3, LINK_MAX_NEAREST), it.project));
  const hitSeqs = [
    ...new Set(
      hits
        .flat()
        .filter((h) => h.similarity >= Math.min(mergeAt, linkAt))
        .map((h) => h.seq),
    ),
  ];
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
