import { invalid } from "../../errors";
import { documentFrequency } from "./frequency";
import type { Services } from "../services";
import { keywords, stem } from "../text";
import { QUERY_MAX_CHARS, QUERY_MAX_TERMS, SCORE_COSINE_BASELINE, SCORE_COSINE_FULL, SCORE_VECTOR_WEIGHT } from "./tuning";

/**
 * What a search score means, independent of the other results: how much of
 * what the query asks for this memory holds. Rank fusion (RRF) only orders
 * one answer (its best hit always reads 1, however weak); this is absolute,
 * so a score of one query compares with a score of another and `min_score`
 * can cut the weak ones.
 *
 * - Lexical coverage: the share of the query's informative words (stop
 *   words dropped, stemmed), each weighted by its IDF over the whole store,
 *   that the memory contains. A memory sharing only "main" with a six-word
 *   question covers a small share of it; one holding every rare word covers
 *   nearly all.
 * - Semantic evidence: the cosine similarity to the query above the level
 *   unrelated texts reach with this embedder (SCORE_COSINE_BASELINE), scaled
 *   so a close paraphrase reaches 1 (SCORE_COSINE_FULL), weighted by how
 *   much the embedder adds beyond the words (SCORE_VECTOR_WEIGHT: the
 *   hashing fallback's vectors only repeat the words).
 * - Relevance combines the two as independent evidence (noisy OR), so either
 *   alone can make a memory relevant and both together more so.
 */

/** The query's informative words, their IDF weights and one pattern finding them in text. */
export interface QueryTerms {
  stems: string[];
  weights: number[];
  total: number;
  /** Finds words starting with a query stem; each hit is then checked by stemming it. */
  pattern: RegExp | null;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export async function queryTerms(s: Services, query: string): Promise<QueryTerms> {
  const terms = [...new Set(keywords(query.slice(0, QUERY_MAX_CHARS)))].slice(0, QUERY_MAX_TERMS);
  const n = s.index.memories;
  // Counting stops at half the store, as bm25Expression's does (the same cache answers both):
  // a word in half the store weighs ln(2) already, little against a rare word's ln(n).
  const cap = Math.floor(n / 2) + 1;
  const byStem = new Map<string, number>();
  const dfs = await Promise.all(terms.map((t) => documentFrequency(s, t, cap)));
  for (const [i, t] of terms.entries()) {
    const w = Math.log((n + 1) / (dfs[i] + 0.5));
    const st = stem(t);
    byStem.set(st, Math.max(byStem.get(st) ?? 0, Math.max(w, 0.05)));
  }
  const stems = [...byStem.keys()];
  const weights = [...byStem.values()];
  const total = weights.reduce((a, b) => a + b, 0);
  const pattern = stems.length ? new RegExp(`(?<![\\p{L}\\p{N}])(?:${stems.map(escapeRegex).join("|")})[\\p{L}\\p{N}]*`, "giu") : null;
  return { stems, weights, total, pattern };
}

/** IDF-weighted share of the query's words present in `text`, in [0, 1]. */
export function coverage(q: QueryTerms, text: string): number {
  if (!q.pattern || q.total === 0) return 0;
  const found = new Set<string>();
  for (const m of text.matchAll(q.pattern)) {
    const st = stem(m[0].toLowerCase());
    if (q.stems.includes(st)) found.add(st);
    if (found.size === q.stems.length) break;
  }
  let sum = 0;
  q.stems.forEach((st, i) => {
    if (found.has(st)) sum += q.weights[i];
  });
  return sum / q.total;
}

/** Cosine similarity turned into evidence of relevance in [0, 1] for this embedder. */
export function semantic(kind: "onnx" | "fallback", cosine: number | undefined): number {
  if (cosine === undefined) return 0;
  const base = SCORE_COSINE_BASELINE[kind];
  return Math.min(1, Math.max(0, (cosine - base) / (SCORE_COSINE_FULL[kind] - base)));
}

/** Absolute relevance in [0, 1] from lexical coverage and semantic evidence. */
export function absoluteRelevance(kind: "onnx" | "fallback", lexical: number, cosine: number | undefined): number {
  return 1 - (1 - lexical) * (1 - SCORE_VECTOR_WEIGHT[kind] * semantic(kind, cosine));
}

/** Relevance of each candidate (by seq), from the first SCORE_CONTENT_CHARS of its content (`text`, read with its scoring row). */
export async function relevanceBySeq(
  s: Services,
  query: string,
  rows: Iterable<{ seq: number; text: string }>,
  cosine: ReadonlyMap<number, number>,
  lexicalOut?: Map<number, number>,
): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  const list = [...rows];
  if (list.length === 0) return out;
  const q = await queryTerms(s, query);
  for (const r of list) {
    const lexical = coverage(q, r.text);
    lexicalOut?.set(r.seq, lexical);
    out.set(r.seq, absoluteRelevance(s.embedder.kind, lexical, cosine.get(r.seq)));
  }
  return out;
}

/** `min_score` of /search and memsvc_search: a number in [0, 1], or absent. */
export function parseMinScore(value: unknown): number | null {
  if (value === undefined || value === null || value === "") return null;
  const n = typeof value === "number" ? value : typeof value === "string" && /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n) || n < 0 || n > 1) throw invalid("min_score must be a number from 0 to 1");
  return n;
}
