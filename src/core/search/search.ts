import { invalid } from "../../errors";
import { staleOf, type StaleMark } from "../memories";
import { thresholds } from "./calibration";
import { rowsBySeq, toView, type MemoryView } from "../memories";
import { parseMinScore, relevanceBySeq } from "./score";
import type { Services } from "../services";
import { effectiveStrength, round3 } from "../memories";
import { keywords } from "../text";
import {
  BM25_MAX_SCORED_ROWS,
  BM25_MAX_WEIGHED_POSTINGS,
  BM25_TERM_COUNTS_DRIFT,
  BM25_TERM_COUNTS_MAX,
  DEFAULT_SEARCH_LIMIT,
  GRAPH_HOP_DIRECT_FACTOR,
  GRAPH_HOP_FACTOR,
  GRAPH_SEEDS,
  MAX_LIMIT,
  QUERY_MAX_CHARS,
  QUERY_MAX_TERMS,
  RRF_K,
  SCORE_RANK_SHARE,
  SEARCH_CANDIDATES,
  STALE_RANK_FACTOR,
  STRENGTH_WEIGHT,
  VECTOR_RRF_WEIGHT,
} from "../tuning";

export interface SearchInput {
  query?: unknown;
  limit?: unknown;
  project?: unknown;
  /** Drop results scoring below this (0..1); absent: top-k, however weak. */
  min_score?: unknown;
}

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

/**
 * An FTS5 expression built only from word characters, each quoted: no user
 * text can form FTS syntax (quotes, AND, *, -, NEAR, column filters).
 */
export function ftsExpression(query: string): string | null {
  const terms = [...new Set(keywords(query.slice(0, QUERY_MAX_CHARS)))].slice(0, QUERY_MAX_TERMS);
  return terms.length ? terms.map((t) => `"${t}"`).join(" OR ") : null;
}

/** Seqs of the best BM25 matches of an FTS expression, optionally within one project. */
export function bm25Candidates(s: Services, expr: string, project: string | null, k: number): number[] {
  const rows = project
    ? s.store.sqlite
        .query<{ seq: number }, [string, string, number]>(
          "SELECT f.rowid AS seq FROM memories_fts f JOIN memories m ON m.seq = f.rowid WHERE memories_fts MATCH ? AND m.project = ? ORDER BY bm25(memories_fts) LIMIT ?",
        )
        .all(expr, project, k)
    : s.store.sqlite.query<{ seq: number }, [string, number]>("SELECT rowid AS seq FROM memories_fts WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT ?").all(expr, k);
  return rows.map((r) => r.seq);
}

/**
 * Document frequencies of query words, per Services, valid while the store
 * stays near `basis` memories. A count stopped at its cap is kept as such
 * (`capped`): it answers any later question with the same or a lower cap.
 */
interface TermCounts {
  basis: number;
  df: Map<string, { n: number; capped: boolean }>;
}
const termCounts = new WeakMap<Services, TermCounts>();

/**
 * Memories containing `term`, counted up to `cap` (the answer is `cap` when
 * there are at least that many). Shared by search and the recall index, so a
 * word is counted once for both.
 */
export function documentFrequency(s: Services, term: string, cap: number): number {
  const total = s.index.size;
  let tc = termCounts.get(s);
  if (!tc || Math.abs(total - tc.basis) > tc.basis * BM25_TERM_COUNTS_DRIFT || tc.df.size > BM25_TERM_COUNTS_MAX) {
    tc = { basis: total, df: new Map() };
    termCounts.set(s, tc);
  }
  const known = tc.df.get(term);
  if (known && (!known.capped || known.n >= cap)) return Math.min(known.n, cap);
  const n = s.store.sqlite
    .query<{ n: number }, [string, number]>("SELECT count(*) AS n FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)")
    .get(`"${term}"`, cap)!.n;
  tc.df.set(term, { n, capped: n >= cap });
  return n;
}

const quoteOr = (terms: readonly string[]) => terms.map((t) => `"${t}"`).join(" OR ");

/**
 * The FTS5 expression search runs. bm25() scores every row the expression
 * matches before LIMIT applies (~1 µs a row), so an OR of common words over a
 * large store costs tens of milliseconds. Small stores get every query word.
 * In large ones, words in more than half the store are dropped (FTS5 gives
 * them zero weight anyway), and when the rest would still match more than
 * BM25_MAX_SCORED_ROWS rows, only rows holding one of the rarest words are
 * scored: `(rare) AND (all)`, so those rows are still ranked by the other
 * words too (up to BM25_MAX_WEIGHED_POSTINGS: FTS5 reads every occurrence of
 * a word to weigh it). Counts are cached; a new word is counted once.
 */
export function bm25Expression(s: Services, query: string): string | null {
  const terms = [...new Set(keywords(query.slice(0, QUERY_MAX_CHARS)))].slice(0, QUERY_MAX_TERMS);
  if (terms.length === 0) return null;
  const total = s.index.size;
  if (total <= BM25_MAX_SCORED_ROWS) return quoteOr(terms);
  const half = Math.floor(total / 2);
  const counted = terms.map((term) => ({ term, df: documentFrequency(s, term, half + 1) })).filter((t) => t.df <= half);
  if (counted.length === 0) return null;
  counted.sort((a, b) => a.df - b.df);
  // The rarest words, as many as BM25_MAX_SCORED_ROWS rows allow (at least one)...
  let rows = 0;
  let rare = 0;
  while (rare < counted.length && (rare === 0 || rows + counted[rare].df <= BM25_MAX_SCORED_ROWS)) rows += counted[rare++].df;
  // ...ranked by those and the next ones, up to BM25_MAX_WEIGHED_POSTINGS occurrences.
  let weighed = rare;
  while (weighed < counted.length && rows + counted[weighed].df <= BM25_MAX_WEIGHED_POSTINGS) rows += counted[weighed++].df;
  const used = quoteOr(counted.slice(0, weighed).map((t) => t.term));
  return rare === weighed ? used : `(${quoteOr(counted.slice(0, rare).map((t) => t.term))}) AND (${used})`;
}

interface Candidate {
  rrf: number;
  via: Set<string>;
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
export async function search(s: Services, input: SearchInput, queryVector?: Float32Array): Promise<SearchResult> {
  const query = parseQuery(input.query);
  const limit = parseLimit(input.limit, DEFAULT_SEARCH_LIMIT);
  const project = parseProject(input.project);
  const minScore = parseMinScore(input.min_score);
  const vector = queryVector ?? (await s.embedder.embed([query], "query"))[0];
  return await rank(s, query, vector, limit, project, minScore);
}

/** What ranking needs of a candidate; full rows are read for the returned few only. */
interface ScoringRow {
  seq: number;
  id: string;
  project: string | null;
  strength: number;
  refreshedAt: number;
}

function scoringRows(s: Services, seqs: number[]): Map<number, ScoringRow> {
  const out = new Map<number, ScoringRow>();
  if (seqs.length === 0) return out;
  const rows = s.store.sqlite
    .query<ScoringRow, [string]>("SELECT seq, id, project, strength, refreshed_at AS refreshedAt FROM memories WHERE seq IN (SELECT value FROM json_each(?))")
    .all(JSON.stringify(seqs));
  for (const r of rows) out.set(r.seq, r);
  return out;
}

/** The synchronous part of search, once the query vector is known (benchmarks time this). */
export async function rank(s: Services, query: string, vector: Float32Array, limit: number, project: string | null, minScore: number | null = null): Promise<SearchResult> {
  const now = s.now();
  const fused = new Map<number, Candidate>();
  const add = (seq: number, score: number, via: string) => {
    const c = fused.get(seq);
    if (c) {
      c.rrf += score;
      c.via.add(via);
    } else fused.set(seq, { rrf: score, via: new Set([via]) });
  };
  const expr = bm25Expression(s, query);
  if (expr) bm25Candidates(s, expr, project, SEARCH_CANDIDATES).forEach((seq, i) => add(seq, 1 / (RRF_K + i + 1), "bm25"));
  const floor = thresholds(s).vectorMin;
  const weight = VECTOR_RRF_WEIGHT[s.embedder.kind];
  const cosine = new Map<number, number>();
  s.index
    .search(vector, SEARCH_CANDIDATES, project)
    .filter((hit) => hit.similarity >= floor)
    .forEach((hit, i) => {
      cosine.set(hit.seq, hit.similarity);
      add(hit.seq, weight / (RRF_K + i + 1), "vector");
    });

  const best = (1 + weight) / (RRF_K + 1);
  const seeds = [...fused.entries()].sort((a, b) => b[1].rrf - a[1].rrf).slice(0, Math.max(GRAPH_SEEDS, limit));
  const rows = scoringRows(s, [...fused.keys()]);
  widenByGraph(s, seeds, rows, fused, project);

  const absolute = relevanceBySeq(s, query, [...rows.keys()], cosine);
  const stale = await staleOf(s, [...rows.values()].map((r) => r.id));
  const scored: { seq: number; score: number; relevance: number; rank: number }[] = [];
  for (const [seq, c] of fused) {
    const row = rows.get(seq);
    if (!row) continue;
    // Evidence caps the score; the fused rank orders within it (see SCORE_RANK_SHARE).
    const relevance = (absolute.get(seq) ?? 0) * (1 - SCORE_RANK_SHARE + SCORE_RANK_SHARE * Math.min(1, c.rrf / best));
    const eff = effectiveStrength(row.strength, row.refreshedAt, now);
    const strengthFactor = 1 - STRENGTH_WEIGHT + STRENGTH_WEIGHT * Math.min(1, eff);
    const score = round3(relevance * strengthFactor * (stale.has(row.id) ? STALE_RANK_FACTOR : 1));
    if (minScore === null || score >= minScore) scored.push({ seq, score, relevance: round3(relevance), rank: c.rrf });
  }
  scored.sort((a, b) => b.score - a.score || b.rank - a.rank);
  const top = scored.slice(0, limit);
  const full = await rowsBySeq(s, top.map((h) => h.seq));
  const results: SearchHit[] = [];
  for (const h of top) {
    const row = full.get(h.seq);
    // Deleted between the two reads (another connection): skip rather than fail.
    if (!row) continue;
    const hit: SearchHit = { ...toView(row, now), score: h.score, relevance: h.relevance, matched_by: [...fused.get(h.seq)!.via] };
    const mark = stale.get(row.id);
    if (mark) hit.stale = mark;
    results.push(hit);
  }
  return { query, count: results.length, results };
}

/**
 * One hop of the graph from the best candidates. A neighbour the retrievers
 * did not find inherits a share of its seed's relevance; one they did find
 * gets GRAPH_HOP_DIRECT_FACTOR (see tuning.ts for why that is 0).
 */
function widenByGraph(s: Services, seeds: [number, Candidate][], rows: Map<number, ScoringRow>, fused: Map<number, Candidate>, project: string | null): void {
  const seedIds = seeds.map(([seq]) => rows.get(seq)?.id).filter((x): x is string => !!x);
  if (seedIds.length === 0) return;
  const rrfById = new Map(seeds.map(([seq, c]) => [rows.get(seq)?.id, c.rrf]));
  const links = s.store.sqlite
    .query<{ seed: string; other: number; weight: number }, [string, string]>(
      `SELECT l.from_id AS seed, m.seq AS other, l.weight AS weight FROM links l JOIN memories m ON m.id = l.to_id
         WHERE l.from_id IN (SELECT value FROM json_each(?))
       UNION ALL
       SELECT l.to_id AS seed, m.seq AS other, l.weight AS weight FROM links l JOIN memories m ON m.id = l.from_id
         WHERE l.to_id IN (SELECT value FROM json_each(?))`,
    )
    .all(JSON.stringify(seedIds), JSON.stringify(seedIds));
  const direct = new Set(fused.keys());
  const fresh: number[] = [];
  for (const l of links) {
    const share = direct.has(l.other) ? GRAPH_HOP_DIRECT_FACTOR : GRAPH_HOP_FACTOR;
    const gain = (rrfById.get(l.seed) ?? 0) * share * Math.min(1, Math.max(0, l.weight));
    if (gain <= 0) continue;
    const c = fused.get(l.other);
    if (c) {
      c.rrf += gain;
      c.via.add("graph");
    } else {
      fused.set(l.other, { rrf: gain, via: new Set(["graph"]) });
      fresh.push(l.other);
    }
  }
  for (const [seq, row] of scoringRows(s, fresh)) {
    if (project && row.project !== project) fused.delete(seq);
    else rows.set(seq, row);
  }
}
