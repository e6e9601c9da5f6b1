import { invalid } from "../../errors";
import { feedbackMarks, staleOf, type StaleMark } from "../memories";
import { loadThresholds } from "./calibration";
import type { ScoringRow, SearchStore, VectorHit } from "./store";
import { queryKeywords } from "./query";
import { queryVector } from "./query-vector";
import { rowsBySeq, toView, type MemoryView } from "../memories";
import { parseMinScore, relevanceBySeq } from "./score";
import type { Services } from "../services";
import { effectiveStrength, round3 } from "../memories";
import {
  DEFAULT_SEARCH_LIMIT,
  GRAPH_HOP_DIRECT_FACTOR,
  GRAPH_HOP_FACTOR,
  GRAPH_SEEDS,
  QUERY_MAX_CHARS,
  RRF_K,
  SCORE_CONTENT_CHARS,
  SCORE_RANK_SHARE,
  SEARCH_CANDIDATES,
  STALE_RANK_FACTOR,
  STRENGTH_WEIGHT,
  VECTOR_RRF_WEIGHT,
} from "./tuning";
import { MAX_LIMIT } from "../tuning";
import { roundParts, type ScoreParts } from "./parts";

/** The operation's input (schema.ts); meaning (trimming, the cap on limit) is applied here. */
export type { SearchInput } from "./schema";
import type { SearchInput } from "./schema";

export interface SearchHit extends MemoryView {
  /** Absolute relevance times the strength factor, in [0, 1]: comparable across queries (see search-score.ts). */
  score: number;
  /** Evidence that the memory answers the query (lexical coverage, semantic similarity), ordered by fused rank, before strength, in [0, 1]. */
  relevance: number;
  /** "bm25", "vector" and/or "graph": which retrievers found it. */
  matched_by: string[];
  /** Present when a client marked the memory possibly outdated: what changed in the code it is anchored to. */
  stale?: StaleMark;
}

export interface SearchResult {
  query: string;
  count: number;
  results: SearchHit[];
}

export function parseLimit(value: unknown, fallback: number, max = MAX_LIMIT, field = "limit"): number {
  if (value === undefined || value === null || value === "") return fallback;
  const n = typeof value === "number" ? value : typeof value === "string" && /^\s*-?\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 1) throw invalid(`${field} must be a positive integer`);
  return Math.min(n, max);
}

export function parseProject(value: unknown): string | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string") throw invalid("project must be a string");
  if (value.length > 200) throw invalid("project is longer than 200 characters");
  return value.trim() || null;
}

interface Candidate {
  rrf: number;
  via: Set<string>;
  /** What the graph hop added to rrf. */
  graph: number;
}

/**
 * Filled by rank() when asked (receipts): each result's score parts, and
 * the candidates that did not make it (below min_score, or past the limit),
 * best first.
 */
export interface SearchExplain {
  parts: Map<string, ScoreParts>;
  dropped: { id: string; score: number; parts: ScoreParts; reason: "threshold" | "limit"; content: string }[];
  /** How many near misses to keep. */
  keep: number;
}

/** Text → validated query string (cut, never rejected, when long). */
export function parseQuery(value: unknown): string {
  if (typeof value !== "string") throw invalid("query is required and must be a string");
  const q = value.trim();
  if (!q) throw invalid("query must not be empty");
  return q.length > QUERY_MAX_CHARS ? q.slice(0, QUERY_MAX_CHARS) : q;
}

/**
 * Hybrid search: BM25 and vector KNN fused by reciprocal rank fusion, widened
 * by one hop of the graph, ranked by relevance and effective strength.
 */
export async function search(s: Services, input: SearchInput, given?: Float32Array, explain?: SearchExplain): Promise<SearchResult> {
  const query = parseQuery(input.query);
  const limit = parseLimit(input.limit, DEFAULT_SEARCH_LIMIT);
  const project = parseProject(input.project);
  const minScore = parseMinScore(input.min_score);
  const vector = given ?? (await queryVector(s, query));
  return rank(s, query, vector, limit, project, minScore, explain);
}

async function scoringRows(s: Services, seqs: number[]): Promise<Map<number, ScoringRow>> {
  const out = new Map<number, ScoringRow>();
  if (seqs.length === 0) return out;
  for (const r of await s.storage.search.scoringRows(seqs, SCORE_CONTENT_CHARS)) out.set(r.seq, r);
  return out;
}

/** Search once the query vector is known (benchmarks time this). */
export async function rank(
  s: Services,
  query: string,
  vector: Float32Array,
  limit: number,
  project: string | null,
  minScore: number | null = null,
  explain?: SearchExplain,
): Promise<SearchResult> {
  const now = s.now();
  const fused = new Map<number, Candidate>();
  const add = (seq: number, score: number, via: string) => {
    const c = fused.get(seq);
    if (c) {
      c.rrf += score;
      c.via.add(via);
    } else fused.set(seq, { rrf: score, via: new Set([via]), graph: 0 });
  };
  const terms = queryKeywords(query);
  // Both retrievers at once: on a networked engine their round trips overlap.
  const [lexical, nearest, t] = await Promise.all([
    terms.length ? s.storage.search.fullText(terms, project, SEARCH_CANDIDATES) : [],
    s.storage.search.nearest(vector, SEARCH_CANDIDATES, project),
    loadThresholds(s),
  ]);
  lexical.forEach((seq, i) => {
    add(seq, 1 / (RRF_K + i + 1), "bm25");
  });
  const floor = t.vectorMin;
  const weight = VECTOR_RRF_WEIGHT[s.embedder.kind];
  const cosine = new Map<number, number>();
  nearest
    .filter((hit) => hit.similarity >= floor)
    .forEach((hit, i) => {
      cosine.set(hit.seq, hit.similarity);
      add(hit.seq, weight / (RRF_K + i + 1), "vector");
    });

  const best = (1 + weight) / (RRF_K + 1);
  const seeds = [...fused.entries()].sort((a, b) => b[1].rrf - a[1].rrf).slice(0, Math.max(GRAPH_SEEDS, limit));
  // The candidates' rows and the graph hop's links (with the far ends' rows) at once: on a networked engine two round trips overlap.
  const [rows, links] = await Promise.all([
    scoringRows(s, [...fused.keys()]),
    seeds.length
      ? s.storage.search.neighbours(
          seeds.map(([seq]) => seq),
          SCORE_CONTENT_CHARS,
        )
      : [],
  ]);
  widenByGraph(seeds, links, rows, fused, project);

  const coverageOf = explain ? new Map<number, number>() : undefined;
  const [absolute, stale, marks] = await Promise.all([
    relevanceBySeq(s, query, rows.values(), cosine, coverageOf),
    staleOf(
      s,
      [...rows.values()].map((r) => r.id),
    ),
    feedbackMarks(s),
  ]);
  const scored: { seq: number; score: number; relevance: number; rank: number }[] = [];
  const partsOf = (seq: number, row: ScoringRow): ScoreParts => {
    const eff = effectiveStrength(row.strength, row.refreshedAt, now);
    return roundParts({
      full_text: coverageOf?.get(seq) ?? 0,
      vector: cosine.get(seq) ?? null,
      graph: fused.get(seq)!.graph > 0 ? fused.get(seq)!.graph / best : null,
      strength: row.strength,
      recency: row.strength > 0 ? eff / row.strength : 1,
      topic: null,
      stale: stale.has(row.id) ? STALE_RANK_FACTOR : 1,
    });
  };
  const below: { seq: number; score: number }[] = [];
  for (const [seq, c] of fused) {
    const row = rows.get(seq);
    // A retired memory is kept with its history, out of search (memories/feedback.ts).
    if (!row || marks.get(row.id)?.retired) continue;
    // Evidence caps the score; the fused rank orders within it (see SCORE_RANK_SHARE).
    const relevance = (absolute.get(seq) ?? 0) * (1 - SCORE_RANK_SHARE + SCORE_RANK_SHARE * Math.min(1, c.rrf / best));
    const eff = effectiveStrength(row.strength, row.refreshedAt, now);
    const strengthFactor = 1 - STRENGTH_WEIGHT + STRENGTH_WEIGHT * Math.min(1, eff);
    const score = round3(relevance * strengthFactor * (stale.has(row.id) ? STALE_RANK_FACTOR : 1));
    if (minScore === null || score >= minScore) scored.push({ seq, score, relevance: round3(relevance), rank: c.rrf });
    else if (explain) below.push({ seq, score });
  }
  scored.sort((a, b) => b.score - a.score || b.rank - a.rank);
  const top = scored.slice(0, limit);
  const misses = explain
    ? [...scored.slice(limit).map((h) => ({ ...h, reason: "limit" as const })), ...below.map((h) => ({ ...h, reason: "threshold" as const }))]
        .sort((a, b) => b.score - a.score)
        .slice(0, explain.keep)
    : [];
  // The results' rows and the near misses' (for the receipt) in one read.
  const full = await rowsBySeq(s, [...top.map((h) => h.seq), ...misses.map((m) => m.seq)]);
  if (explain) {
    for (const m of misses) {
      const row = rows.get(m.seq);
      const content = full.get(m.seq);
      if (row && content) explain.dropped.push({ id: row.id, score: m.score, parts: partsOf(m.seq, row), reason: m.reason, content: content.content });
    }
  }
  const results: SearchHit[] = [];
  for (const h of top) {
    const row = full.get(h.seq);
    // Deleted between the two reads (another connection): skip rather than fail.
    if (!row) continue;
    const hit: SearchHit = { ...toView(row, now), score: h.score, relevance: h.relevance, matched_by: [...fused.get(h.seq)!.via] };
    const mark = stale.get(row.id);
    if (mark) hit.stale = mark;
    results.push(hit);
    if (explain) explain.parts.set(row.id, partsOf(h.seq, rows.get(h.seq)!));
  }
  return { query, count: results.length, results };
}

/**
 * One hop of the graph from the best candidates. A neighbour the retrievers
 * did not find inherits a share of its seed's relevance; one they did find
 * gets GRAPH_HOP_DIRECT_FACTOR (see docs/decisions/search-ranking.md for why that is 0).
 * `links` come with the far end's scoring row; a seed whose row is gone (deleted
 * meanwhile) seeds nothing, and a neighbour outside the project is dropped.
 */
function widenByGraph(
  seeds: [number, Candidate][],
  links: readonly { seed: number; weight: number; other: ScoringRow }[],
  rows: Map<number, ScoringRow>,
  fused: Map<number, Candidate>,
  project: string | null,
): void {
  const rrfBySeed = new Map(seeds.filter(([seq]) => rows.has(seq)).map(([seq, c]) => [seq, c.rrf]));
  if (rrfBySeed.size === 0) return;
  const direct = new Set(fused.keys());
  const fresh = new Map<number, ScoringRow>();
  for (const l of links) {
    const seed = rrfBySeed.get(l.seed);
    if (seed === undefined) continue;
    const other = l.other.seq;
    const share = direct.has(other) ? GRAPH_HOP_DIRECT_FACTOR : GRAPH_HOP_FACTOR;
    const gain = seed * share * Math.min(1, Math.max(0, l.weight));
    if (gain <= 0) continue;
    const c = fused.get(other);
    if (c) {
      c.rrf += gain;
      c.graph += gain;
      c.via.add("graph");
    } else {
      fused.set(other, { rrf: gain, via: new Set(["graph"]), graph: gain });
      fresh.set(other, l.other);
    }
  }
  for (const [seq, row] of fresh) {
    if (project && row.project !== project) fused.delete(seq);
    else rows.set(seq, row);
  }
}

/** The engine's synchronous reads (SQLite only), or an error naming the async method to use instead. */
function syncReads(s: Services, method: string): NonNullable<SearchStore["sync"]> {
  const sync = s.storage.search.sync;
  if (!sync) throw new Error(`a synchronous ${method} needs the SQLite engine; use await storage.search.${method}`);
  return sync;
}

/*
 * Synchronous forms for the callers that are still synchronous functions
 * (analytics/domains.ts's keywords) until
 * their capabilities' stores go async. Everything else uses the async
 * s.storage.search methods.
 */

/** Nearest vectors, synchronously (SQLite's in-memory index). */
export function nearestNow(s: Services, vector: Float32Array, k: number, project?: string | null): VectorHit[] {
  return syncReads(s, "nearest").nearest(vector, k, project);
}

/** Best full-text matches of these words, synchronously (SQLite's FTS5). */
export function fullTextNow(s: Services, terms: readonly string[], project: string | null, k: number, opts?: { every?: boolean }): number[] {
  return syncReads(s, "fullText").fullText(terms, project, k, opts);
}
