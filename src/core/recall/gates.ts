import { thresholds } from "../search";
import { idfOf, promptTerms, rareTerms, weighTerms, type PromptTerm } from "./terms";
import { blendedVector, type TopicBlend } from "./topic";
import type { Services } from "../services";
import { effectiveStrength } from "../memories";
import { stem } from "../text";
import { contentStems } from "./stems";
import {
  RECALL_CANDIDATES,
  RECALL_GLOBAL_CANDIDATES,
  RECALL_GLOBAL_COVERAGE,
  RECALL_GLOBAL_RANK_FACTOR,
  RECALL_IRRELEVANT_FACTOR,
  RECALL_LINE_COVERAGE,
  RECALL_MAX_LINES,
  RECALL_MIN_COVERAGE,
  RECALL_MIN_EVIDENCE,
} from "./tuning";
import { STALE_RANK_FACTOR, STRENGTH_WEIGHT } from "../search/tuning";
import { feedbackMarks, staleOf, type StaleMark } from "../memories";
import type { ScoreParts } from "../search";

/** A memory the recall index might list, with the evidence the gates look at. */
export interface RecallCandidate {
  seq: number;
  id: string;
  content: string;
  memoryType: string;
  project: string | null;
  createdAt: number;
  /** Cosine similarity to the query (prompt blended with the session topic), when the vector retriever found it. */
  similarity: number | null;
  /** 0-based BM25 rank, when the keyword retriever found it. */
  bm25Rank: number | null;
  /** Distinct query keywords (stemmed) that occur in the memory. */
  overlap: number;
  /** ...of which words of the prompt itself (not only of the session topic). */
  promptOverlap: number;
  /** IDF weight of the query words it holds, in units of a word found in one memory. */
  evidence: number;
  /** Share of the query's IDF weight it holds, in [0, 1]. */
  coverage: number;
  /** A memory of no project (or another one) recalled for a project: held to the stricter gate. */
  global: boolean;
  /** Order among those that pass: evidence (plus similarity) times effective strength. */
  score: number;
  /** A client's mark that the code it is anchored to changed (see anchors.ts). */
  stale: StaleMark | null;
  /** Score parts for the receipt. */
  parts: ScoreParts;
  /** Feedback keeps it out: `wrong` not yet settled, or retired. */
  excluded: "wrong" | "retired" | null;
  /** Feedback said it is irrelevant to prompts like this one: it ranks lower and cannot open a block. */
  demoted: boolean;
}

/**
 * A query word with its weight: its IDF, times the topic's weight for words
 * only the topic brings. `share` is what it adds to the coverage (a share of
 * the prompt's own weight): the topic's words together add at most the
 * topic's weight, so a rich topic cannot stand in for the prompt.
 */
interface WeightedTerm extends PromptTerm {
  weight: number;
  share: number;
  fromPrompt: boolean;
}

/** The prompt's words (`given`: already weighed by the caller), plus the session topic's words weighted by how much the topic counts now. */
export async function queryTerms(s: Services, prompt: string, blend: TopicBlend | null, given?: readonly PromptTerm[]): Promise<WeightedTerm[]> {
  const own = (given ?? (await promptTerms(s, prompt))).map((t) => ({ ...t, weight: t.idf, share: t.idf, fromPrompt: true }));
  if (!blend || blend.weight === 0) return own;
  const have = new Set(own.map((t) => t.stem));
  const topicWords = Object.keys(blend.topic.terms).filter((w) => !have.has(stem(w)));
  const extra = (await weighTerms(s, topicWords))
    .map((t) => ({ ...t, weight: t.idf * blend.weight * (blend.topic.terms[t.term] ?? 0), share: 0, fromPrompt: false }))
    .filter((t) => t.weight > 0);
  const ownTotal = own.reduce((a, t) => a + t.weight, 0);
  const extraTotal = extra.reduce((a, t) => a + t.weight, 0);
  const scale = extraTotal > 0 ? Math.min(1, (blend.weight * Math.max(ownTotal, 1)) / extraTotal) : 0;
  for (const t of extra) t.share = t.weight * scale;
  return [...own, ...extra];
}

function matchOf(
  content: string,
  terms: readonly WeightedTerm[],
): { overlap: number; promptOverlap: number; weight: number; topicWeight: number; share: number } {
  const byStem = new Map(terms.map((t) => [t.stem, t]));
  const found = new Set<string>();
  for (const st of contentStems(content)) {
    if (byStem.has(st)) found.add(st);
    if (found.size === byStem.size) break;
  }
  let weight = 0;
  let topicWeight = 0;
  let share = 0;
  let promptOverlap = 0;
  for (const st of found) {
    const t = byStem.get(st)!;
    weight += t.weight;
    share += t.share;
    if (t.fromPrompt) promptOverlap++;
    else topicWeight += t.weight;
  }
  return { overlap: found.size, promptOverlap, weight, topicWeight, share };
}

/**
 * Every candidate both retrievers bring, with its evidence, before any gate
 * (the bench tunes the gates on this). With a project, retrieval runs inside
 * it, and project-less memories (knowledge that holds everywhere) compete
 * under a stricter gate and rank after the project's own; other projects'
 * memories never appear: their ports, paths and commands would mislead.
 * `projectOnly` (a project-scoped caller) leaves the project-less ones out
 * too: they belong to no member's scope.
 */
export async function scoreCandidates(
  s: Services,
  prompt: string,
  promptVector: Float32Array,
  project: string | null,
  blend: TopicBlend | null = null,
  given?: readonly PromptTerm[],
  projectOnly = false,
): Promise<RecallCandidate[]> {
  const vector = blendedVector(promptVector, blend);
  const terms = await queryTerms(s, prompt, blend, given);
  const found = new Map<number, { similarity: number | null; bm25Rank: number | null }>();
  const note = (seq: number) => {
    let c = found.get(seq);
    if (!c) found.set(seq, (c = { similarity: null, bm25Rank: null }));
    return c;
  };
  // Full text first: on SQLite a reader thread runs it while the vectors are scanned here (store/sqlite/fts-reader.ts).
  const rare = rareTerms(s, terms);
  const lexical = rare.length ? s.storage.search.fullText(rare, project, RECALL_CANDIDATES, { every: true }) : null;
  // Awaited below; these only keep a rejection from counting as unhandled if a vector search throws first.
  lexical?.catch(() => {});
  const inProject = s.storage.search.nearest(vector, RECALL_CANDIDATES, project);
  // "" is the index's group of project-less memories; asked at once (on PostgreSQL both searches overlap), noted in the same order.
  const projectLess = project !== null && !projectOnly ? s.storage.search.nearest(vector, RECALL_GLOBAL_CANDIDATES, "") : null;
  projectLess?.catch(() => {});
  for (const h of await inProject) note(h.seq).similarity = h.similarity;
  if (projectLess) for (const h of await projectLess) note(h.seq).similarity = h.similarity;
  if (lexical)
    (await lexical).forEach((seq, i) => {
      note(seq).bm25Rank = i;
    });
  if (found.size === 0) return [];
  const rows = await s.storage.recall.candidateRows([...found.keys()]);
  // Coverage is of the prompt's own weight: topic words can add to it, never dilute it.
  const total = terms.reduce((a, t) => a + (t.fromPrompt ? t.share : 0), 0);
  // The unit of evidence: the weight of a word found in a single memory.
  const unit = idfOf(1, Math.max(1, s.index.memories));
  const now = s.now();
  const [stale, marks] = await Promise.all([
    staleOf(
      s,
      rows.map((r) => r.id),
    ),
    feedbackMarks(s),
  ]);
  const related = marks.size > 0 ? thresholds(s).topicRelated : 1;
  return rows.map((r) => {
    const c = found.get(r.seq)!;
    const m = matchOf(r.content, terms);
    const eff = Math.min(1, effectiveStrength(r.strength, r.refreshedAt, now));
    const global = project !== null && r.project !== project;
    const evidence = m.weight / unit;
    const mark = marks.get(r.id);
    // Irrelevant to a prompt like this one: the prompt it was reported for is as close as a related one.
    const demoted = !!mark?.irrelevant.some((x) => x.vector.length === vector.length && dot(x.vector, vector) >= related);
    // Similarity only breaks ties: on LoCoMo-dev, evidence alone ordered lines best (sim weight 1: -1 point).
    const relevance = evidence + 0.1 * (c.similarity ?? 0);
    const staleFactor = stale.has(r.id) ? STALE_RANK_FACTOR : 1;
    const feedback = demoted ? RECALL_IRRELEVANT_FACTOR : 1;
    return {
      seq: r.seq,
      id: r.id,
      content: r.content,
      memoryType: r.memoryType,
      project: r.project,
      createdAt: r.createdAt,
      similarity: c.similarity,
      bm25Rank: c.bm25Rank,
      overlap: m.overlap,
      promptOverlap: m.promptOverlap,
      evidence,
      coverage: total > 0 ? Math.min(1, m.share / total) : 0,
      global,
      score: relevance * (1 - STRENGTH_WEIGHT + STRENGTH_WEIGHT * eff) * (global ? RECALL_GLOBAL_RANK_FACTOR : 1) * staleFactor * feedback,
      stale: stale.get(r.id) ?? null,
      parts: {
        full_text: (m.weight - m.topicWeight) / unit,
        vector: c.similarity,
        graph: null,
        strength: r.strength,
        recency: r.strength > 0 ? effectiveStrength(r.strength, r.refreshedAt, now) / r.strength : 1,
        topic: m.topicWeight / unit,
        stale: staleFactor,
        ...(demoted ? { feedback } : {}),
      },
      excluded: mark?.retired ? "retired" : mark?.wrong ? "wrong" : null,
      demoted,
    };
  });
}

function dot(a: Float32Array, b: Float32Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += a[i] * b[i];
  return d;
}

/**
 * Whether a candidate may be a line of the block. Precision over recall: a
 * line costs the agent attention on every prompt. It must hold a word of the
 * prompt itself (the topic alone does not recall) and a fair share of the
 * query's weight; a project-less memory recalled for a project must also be
 * found by the vectors above the calibrated global similarity.
 */
export function passesLineGate(c: RecallCandidate, t: { recallGlobal: number }): boolean {
  if (c.promptOverlap === 0) return false;
  if (c.global) return c.coverage >= RECALL_GLOBAL_COVERAGE && c.evidence >= RECALL_MIN_EVIDENCE && (c.similarity ?? -1) >= t.recallGlobal;
  return c.coverage >= RECALL_LINE_COVERAGE;
}

/**
 * Whether the best line is strong enough for a block at all: it holds a large
 * share of the query's weight, words that together say as much as one word
 * found in a single memory, and the vectors agree above the calibrated floor.
 */
export function passesBlockGate(c: RecallCandidate, t: { recall: number; recallGlobal: number }): boolean {
  if (!passesLineGate(c, t) || c.coverage < RECALL_MIN_COVERAGE || c.evidence < RECALL_MIN_EVIDENCE) return false;
  return (c.similarity ?? -1) >= t.recall;
}

/** What the gates made of a prompt's candidates: the lines in order, and why each other one was left out. */
export interface RecallSelection {
  lines: RecallCandidate[];
  dropped: { candidate: RecallCandidate; reason: "gate" | "suppression" | "threshold" | "feedback" | "limit" }[];
}

/**
 * The memories the index lists: gated, not recently shown in the session,
 * not kept out by feedback, best first; none unless one passes the block
 * gate (a demoted one cannot open a block by itself). The others are
 * returned with their reason, for the receipt.
 */
export async function recallSelection(
  s: Services,
  prompt: string,
  vector: Float32Array,
  project: string | null,
  suppressed: ReadonlySet<string>,
  blend: TopicBlend | null = null,
  terms?: readonly PromptTerm[],
  projectOnly = false,
): Promise<RecallSelection> {
  const t = thresholds(s);
  const dropped: RecallSelection["dropped"] = [];
  const passing: RecallCandidate[] = [];
  for (const c of await scoreCandidates(s, prompt, vector, project, blend, terms, projectOnly)) {
    if (!passesLineGate(c, t)) dropped.push({ candidate: c, reason: "gate" });
    else if (c.excluded) dropped.push({ candidate: c, reason: "feedback" });
    else if (suppressed.has(c.id)) dropped.push({ candidate: c, reason: "suppression" });
    else passing.push(c);
  }
  passing.sort((a, b) => b.score - a.score);
  if (!passing.some((c) => !c.demoted && passesBlockGate(c, t))) {
    for (const c of passing) dropped.push({ candidate: c, reason: c.demoted ? "feedback" : "threshold" });
    return { lines: [], dropped };
  }
  for (const c of passing.slice(RECALL_MAX_LINES)) dropped.push({ candidate: c, reason: "limit" });
  return { lines: passing.slice(0, RECALL_MAX_LINES), dropped };
}

/** The lines of the index alone (the bench tunes the gates on this). */
export async function recallCandidates(
  s: Services,
  prompt: string,
  vector: Float32Array,
  project: string | null,
  suppressed: ReadonlySet<string>,
  blend: TopicBlend | null = null,
  terms?: readonly PromptTerm[],
): Promise<RecallCandidate[]> {
  return (await recallSelection(s, prompt, vector, project, suppressed, blend, terms)).lines;
}
