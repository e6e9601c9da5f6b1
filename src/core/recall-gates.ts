import { rareTermsExpression } from "./recall-terms";
import { bm25Candidates } from "./search";
import type { Services } from "./services";
import { effectiveStrength } from "./strength";
import { keywords, stem } from "./text";
import {
  QUERY_MAX_CHARS,
  QUERY_MAX_TERMS,
  RECALL_CANDIDATES,
  RECALL_GLOBAL_CANDIDATES,
  RECALL_GLOBAL_SIMILARITY,
  RECALL_MAX_LINES,
  RECALL_MIN_OVERLAP,
  RECALL_MIN_SIMILARITY,
  RECALL_STRONG_SIMILARITY,
  RRF_K,
  STRENGTH_WEIGHT,
} from "./tuning";

/** A memory the recall index might list, with the evidence the gates look at. */
export interface RecallCandidate {
  seq: number;
  id: string;
  content: string;
  memoryType: string;
  project: string | null;
  createdAt: number;
  /** Cosine similarity to the prompt, when the vector retriever found it. */
  similarity: number | null;
  /** 0-based BM25 rank, when the keyword retriever found it. */
  bm25Rank: number | null;
  /** Distinct prompt keywords (stemmed) that occur in the memory. */
  overlap: number;
  /** A project-less memory recalled for a project: held to the stricter gate. */
  global: boolean;
  /** Order among those that pass: fused rank times effective strength. */
  score: number;
}

interface Row {
  seq: number;
  id: string;
  content: string;
  memory_type: string;
  project: string | null;
  created_at: number;
  strength: number;
  refreshed_at: number;
}

export function promptStems(prompt: string): Set<string> {
  return new Set(keywords(prompt.slice(0, QUERY_MAX_CHARS)).slice(0, QUERY_MAX_TERMS * 4).map(stem));
}

function overlapOf(content: string, wanted: Set<string>): number {
  const found = new Set<string>();
  for (const w of keywords(content)) {
    const st = stem(w);
    if (wanted.has(st)) found.add(st);
    if (found.size === wanted.size) break;
  }
  return found.size;
}

/**
 * Every candidate both retrievers bring, with its evidence, before any gate
 * (the bench tunes the gates on this). With a project, retrieval runs inside
 * it, and project-less memories (knowledge that holds everywhere) compete
 * under a stricter gate; other projects' memories never appear: their ports,
 * paths and commands would mislead.
 */
export function scoreCandidates(s: Services, prompt: string, vector: Float32Array, project: string | null): RecallCandidate[] {
  const found = new Map<number, { similarity: number | null; bm25Rank: number | null; rrf: number }>();
  const note = (seq: number) => {
    let c = found.get(seq);
    if (!c) found.set(seq, (c = { similarity: null, bm25Rank: null, rrf: 0 }));
    return c;
  };
  s.index.search(vector, RECALL_CANDIDATES, project).forEach((h, i) => {
    const c = note(h.seq);
    c.similarity = h.similarity;
    c.rrf += 1 / (RRF_K + i + 1);
  });
  // "" is the index's group of project-less memories.
  if (project !== null) for (const h of s.index.search(vector, RECALL_GLOBAL_CANDIDATES, "")) note(h.seq).similarity = h.similarity;
  const expr = rareTermsExpression(s, prompt);
  if (expr) {
    const rows = bm25Candidates(s, expr, project, RECALL_CANDIDATES);
    rows.forEach((seq, i) => {
      const c = note(seq);
      c.bm25Rank = i;
      c.rrf += 1 / (RRF_K + i + 1);
    });
  }
  if (found.size === 0) return [];
  const rows = s.store.sqlite
    .query<Row, [string]>(
      "SELECT seq, id, content, memory_type, project, created_at, strength, refreshed_at FROM memories WHERE seq IN (SELECT value FROM json_each(?))",
    )
    .all(JSON.stringify([...found.keys()]));
  const wanted = promptStems(prompt);
  const now = s.now();
  const best = 2 / (RRF_K + 1);
  return rows.map((r) => {
    const c = found.get(r.seq)!;
    const eff = Math.min(1, effectiveStrength(r.strength, r.refreshed_at, now));
    return {
      seq: r.seq,
      id: r.id,
      content: r.content,
      memoryType: r.memory_type,
      project: r.project,
      createdAt: r.created_at,
      similarity: c.similarity,
      bm25Rank: c.bm25Rank,
      overlap: overlapOf(r.content, wanted),
      global: project !== null && r.project !== project,
      score: (Math.max(c.rrf, (c.similarity ?? 0) / (RRF_K + 1)) / best) * (1 - STRENGTH_WEIGHT + STRENGTH_WEIGHT * eff),
    };
  });
}

/**
 * Precision over recall: a line in the block costs the agent attention on
 * every prompt. A memory passes when it shares real keywords with the prompt
 * and either both retrievers agree on it above a similarity floor, or the
 * vector retriever alone is very sure. Project-less memories recalled for a
 * project must be very sure and share more keywords.
 */
export function passesGates(c: RecallCandidate, kind: "onnx" | "fallback"): boolean {
  if (c.overlap < RECALL_MIN_OVERLAP || c.similarity === null) return false;
  if (c.global) return c.overlap > RECALL_MIN_OVERLAP && c.similarity >= RECALL_GLOBAL_SIMILARITY[kind];
  if (c.bm25Rank !== null && c.similarity >= RECALL_MIN_SIMILARITY[kind]) return true;
  return c.similarity >= RECALL_STRONG_SIMILARITY[kind];
}

/** The memories the index lists: gated, not recently shown in the session, best first. */
export function recallCandidates(s: Services, prompt: string, vector: Float32Array, project: string | null, suppressed: ReadonlySet<string>): RecallCandidate[] {
  return scoreCandidates(s, prompt, vector, project)
    .filter((c) => !suppressed.has(c.id) && passesGates(c, s.embedder.kind))
    .sort((a, b) => b.score - a.score)
    .slice(0, RECALL_MAX_LINES);
}
