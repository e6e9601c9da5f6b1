import { currentSnapshot, recordVersion } from "../memories";
import { insertMemoryRows } from "../ingest";
import { thresholds } from "../search";
import { addLink } from "../graph";
import type { NewMemory } from "../memories";
import type { Fragment } from "./model";
import type { Services } from "../services";
import { keywords, stem } from "../text";
import { DISTILL_MERGE_BOOST, DISTILL_MERGED_MAX_CHARS, DISTILL_MODEL_LINK_WEIGHT, DISTILL_REPLACE_COVERAGE } from "./tuning";
import { MAX_STRENGTH } from "../memories/tuning";

/** What happens to one kept fragment. */
type Plan =
  | { kind: "insert"; vector: Float32Array; extends?: { id: string; similarity: number } }
  | { kind: "merge"; vector: Float32Array; targetId: string; content: string | null; similarity: number }
  | { kind: "same-as"; other: number };

export interface Provenance {
  project: string | null;
  sourceAgent: string;
  sourceAgentId: string | null;
  sourceDomain: string | null;
  sourceSession: string | null;
  createdAt: number;
  /** The member token that sent the transcript (issue 36); null for the localhost bypass and the config token. */
  createdBy?: string | null;
}

export interface StoreOutcome {
  ids: string[];
  inserted: number;
  merged: number;
  links: number;
}

const cosine = (a: Float32Array, b: Float32Array) => {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += a[i] * b[i];
  return d;
};

const topicWords = (text: string) => new Set(keywords(text).map(stem));

/**
 * The text a near-duplicate leaves behind: null when the new one adds no
 * topic word; the new text when it restates most of the old one (a correction
 * or fuller version); else both; "separate" when that would grow too long.
 */
export function mergedContent(old: string, next: string): string | null | "separate" {
  const oldWords = topicWords(old);
  const newWords = topicWords(next);
  const added = [...newWords].filter((w) => !oldWords.has(w));
  if (added.length === 0) return null;
  const kept = [...oldWords].filter((w) => newWords.has(w)).length;
  if (oldWords.size === 0 || kept / oldWords.size >= DISTILL_REPLACE_COVERAGE) return next;
  const both = `${old}\n\n${next}`;
  return both.length <= DISTILL_MERGED_MAX_CHARS ? both : "separate";
}

/**
 * Decides, outside any transaction (embedding is async), which fragments are
 * new, which strengthen an existing memory of the same project, and which
 * repeat another fragment of this request.
 */
export async function planFragments(s: Services, kept: readonly Fragment[], project: string | null): Promise<Plan[]> {
  if (kept.length === 0) return [];
  const vectors = await s.embedder.embed(
    kept.map((f) => f.content),
    "document",
  );
  const threshold = thresholds(s).distillMerge;
  const plans: Plan[] = [];
  const claimed = new Map<string, number>();
  const rewrites: { plan: Extract<Plan, { kind: "merge" }>; content: string }[] = [];
  for (let i = 0; i < kept.length; i++) {
    const v = vectors[i];
    const twin = plans.findIndex((p, j) => p.kind !== "same-as" && cosine(vectors[j], v) >= threshold);
    if (twin >= 0) {
      plans.push({ kind: "same-as", other: twin });
      continue;
    }
    const hit = await nearestInProject(s, v, project, threshold);
    if (!hit) {
      plans.push({ kind: "insert", vector: v });
      continue;
    }
    const earlier = claimed.get(hit.id);
    if (earlier !== undefined) {
      plans.push({ kind: "same-as", other: earlier });
      continue;
    }
    const content = mergedContent(hit.content, kept[i].content);
    if (content === "separate") {
      plans.push({ kind: "insert", vector: v, extends: { id: hit.id, similarity: hit.similarity } });
      continue;
    }
    const plan: Extract<Plan, { kind: "merge" }> = { kind: "merge", vector: v, targetId: hit.id, content, similarity: hit.similarity };
    claimed.set(hit.id, i);
    plans.push(plan);
    if (content !== null) rewrites.push({ plan, content });
  }
  if (rewrites.length) {
    const merged = await s.embedder.embed(
      rewrites.map((r) => r.content),
      "document",
    );
    rewrites.forEach((r, k) => {
      r.plan.vector = merged[k];
    });
  }
  return plans;
}

async function nearestInProject(
  s: Services,
  v: Float32Array,
  project: string | null,
  threshold: number,
): Promise<{ id: string; content: string; similarity: number } | null> {
  // The index groups by project, but a null project means "search every group": filter after.
  const hits = (await s.storage.search.nearest(v, project === null ? 10 : 3, project)).filter((h) => h.similarity >= threshold);
  if (hits.length === 0) return null;
  const bySeq = new Map((await s.storage.distill.memoriesBySeq(hits.map((h) => h.seq))).map((r) => [r.seq, r]));
  for (const h of hits) {
    const row = bySeq.get(h.seq);
    if (row && row.project === project) return { id: row.id, content: row.content, similarity: h.similarity };
  }
  return null;
}

/**
 * Writes the plan inside the caller's transaction (`s` is `withStorage(s, tx)`):
 * new memories (vectors, tags, nearest links), strengthened or updated
 * near-duplicates, and the links the model named. Returns what the in-memory
 * index must learn after commit.
 */
export async function writePlan(
  s: Services,
  kept: readonly Fragment[],
  plans: readonly Plan[],
  prov: Provenance,
  shown: ReadonlyMap<string, string>,
): Promise<StoreOutcome & { indexUpdates: { seq: number; vector: Float32Array }[]; fragmentIds: (string | null)[] }> {
  const now = s.now();
  const finalId: (string | null)[] = new Array(kept.length).fill(null);
  const indexUpdates: { seq: number; vector: Float32Array }[] = [];
  let merged = 0;
  let links = 0;

  // Near-duplicates first; a target deleted meanwhile turns the fragment into a new memory.
  const inserts: number[] = [];
  for (const [i, p] of plans.entries()) {
    if (p.kind === "insert") inserts.push(i);
    if (p.kind !== "merge") continue;
    const row = await s.storage.distill.mergeTarget(p.targetId);
    if (!row) {
      inserts.push(i);
      continue;
    }
    const strength = Math.min(MAX_STRENGTH, row.strength + DISTILL_MERGE_BOOST);
    if (p.content !== null) {
      // The restated or corrected text replaces the old one: keep the old as a version.
      const prior = await currentSnapshot(s, p.targetId);
      if (prior && prior.content !== p.content) await recordVersion(s, p.targetId, prior, "distill", null, now);
      await s.storage.distill.rewrite(row.seq, p.content, p.vector, strength, now);
      indexUpdates.push({ seq: row.seq, vector: p.vector });
    } else {
      await s.storage.distill.strengthen(row.seq, strength, now);
    }
    finalId[i] = p.targetId;
    merged++;
  }

  inserts.sort((a, b) => a - b);
  const items: NewMemory[] = inserts.map((i) => ({
    content: kept[i].content,
    memoryType: kept[i].memoryType,
    project: prov.project,
    sourceAgent: prov.sourceAgent,
    sourceAgentId: prov.sourceAgentId,
    sourceDomain: prov.sourceDomain,
    sourceSession: prov.sourceSession,
    createdAt: prov.createdAt,
    createdBy: prov.createdBy ?? null,
    tags: kept[i].tags,
  }));
  const vectorOf = (i: number) => (plans[i] as { vector: Float32Array }).vector;
  const rows = await insertMemoryRows(
    s,
    items,
    inserts.map((i) => vectorOf(i)),
  );
  for (const [k, r] of rows.entries()) {
    finalId[inserts[k]] = r.id;
    indexUpdates.push({ seq: r.seq, vector: vectorOf(inserts[k]) });
    const ext = (plans[inserts[k]] as Extract<Plan, { kind: "insert" }>).extends;
    if (ext) {
      await addLink(s, r.id, ext.id, "extends", ext.similarity);
      links++;
    }
  }
  plans.forEach((p, i) => {
    if (p.kind === "same-as") finalId[i] = finalId[p.other];
  });

  // Links the model named: an index into its own reply (same chunk) or an existing memory's id.
  const byPosition = new Map(kept.map((f, i) => [`${f.chunk}:${f.index}`, i]));
  for (let i = 0; i < kept.length; i++) {
    const from = finalId[i];
    if (!from) continue;
    for (const rel of kept[i].relationships) {
      const to =
        typeof rel.to === "number"
          ? (() => {
              const j = byPosition.get(`${kept[i].chunk}:${rel.to}`);
              return j === undefined ? null : finalId[j];
            })()
          : await resolveExisting(s, rel.to, shown);
      if (!to || to === from) continue;
      await addLink(s, from, to, rel.type, DISTILL_MODEL_LINK_WEIGHT);
      links++;
    }
  }
  const ids = [...new Set(finalId.filter((x): x is string => x !== null))];
  return { ids, inserted: rows.length, merged, links, indexUpdates, fragmentIds: finalId };
}

/** A short or full id the model named: one it was shown, else a unique prefix; null otherwise. */
async function resolveExisting(s: Services, ref: string, shown: ReadonlyMap<string, string>): Promise<string | null> {
  const direct = shown.get(ref.slice(0, 8));
  if (direct?.startsWith(ref)) return direct;
  const ids = await s.storage.distill.idsWithPrefix(ref, 2);
  return ids.length === 1 ? ids[0] : null;
}
