import type { MemoryRow } from "../db";
import { invalid } from "../errors";
import { rowsBySeq, toView, type MemoryView } from "./memories";
import type { Services } from "./services";
import { effectiveStrength, round3 } from "./strength";
import { keywords } from "./text";
import { DEFAULT_SEARCH_LIMIT, GRAPH_HOP_FACTOR, GRAPH_SEEDS, MAX_LIMIT, QUERY_MAX_CHARS, QUERY_MAX_TERMS, RRF_K, SEARCH_CANDIDATES, STRENGTH_WEIGHT, VECTOR_MIN_SIMILARITY } from "./tuning";

export interface SearchInput {
  query?: unknown;
  limit?: unknown;
  project?: unknown;
}

export interface SearchHit extends MemoryView {
  /** Composite of fused relevance and effective strength, in [0, 1]. */
  score: number;
  /** Fused BM25 + vector (+ graph) relevance before strength, in [0, 1]. */
  relevance: number;
  /** "bm25", "vector" and/or "graph": which retrievers found it. */
  matched_by: string[];
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

function bm25Candidates(s: Services, expr: string, project: string | null, k: number): number[] {
  const rows = project
    ? s.store.sqlite
        .query<{ seq: number }, [string, string, number]>(
          "SELECT f.rowid AS seq FROM memories_fts f JOIN memories m ON m.seq = f.rowid WHERE memories_fts MATCH ? AND m.project = ? ORDER BY bm25(memories_fts) LIMIT ?",
        )
        .all(expr, project, k)
    : s.store.sqlite.query<{ seq: number }, [string, number]>("SELECT rowid AS seq FROM memories_fts WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT ?").all(expr, k);
  return rows.map((r) => r.seq);
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
  const vector = queryVector ?? (await s.embedder.embed([query], "query"))[0];
  return rank(s, query, vector, limit, project);
}

/** The synchronous part of search, once the query vector is known (benchmarks time this). */
export function rank(s: Services, query: string, vector: Float32Array, limit: number, project: string | null): SearchResult {
  const now = s.now();
  const fused = new Map<number, Candidate>();
  const add = (seq: number, score: number, via: string) => {
    const c = fused.get(seq);
    if (c) {
      c.rrf += score;
      c.via.add(via);
    } else fused.set(seq, { rrf: score, via: new Set([via]) });
  };
  const expr = ftsExpression(query);
  if (expr) bm25Candidates(s, expr, project, SEARCH_CANDIDATES).forEach((seq, i) => add(seq, 1 / (RRF_K + i + 1), "bm25"));
  const floor = VECTOR_MIN_SIMILARITY[s.embedder.kind];
  s.index
    .search(vector, SEARCH_CANDIDATES, project)
    .filter((hit) => hit.similarity >= floor)
    .forEach((hit, i) => add(hit.seq, 1 / (RRF_K + i + 1), "vector"));

  const best = 2 / (RRF_K + 1);
  const seeds = [...fused.entries()].sort((a, b) => b[1].rrf - a[1].rrf).slice(0, Math.max(GRAPH_SEEDS, limit));
  const rows = rowsBySeq(s, [...fused.keys()]);
  widenByGraph(s, seeds, rows, fused, project);

  const hits: SearchHit[] = [];
  for (const [seq, c] of fused) {
    const row = rows.get(seq);
    if (!row) continue;
    const relevance = Math.min(1, c.rrf / best);
    const eff = effectiveStrength(row.strength, row.refreshedAt, now);
    const strengthFactor = 1 - STRENGTH_WEIGHT + STRENGTH_WEIGHT * Math.min(1, eff);
    hits.push({ ...toView(row, now), score: round3(relevance * strengthFactor), relevance: round3(relevance), matched_by: [...c.via] });
  }
  hits.sort((a, b) => b.score - a.score || b.relevance - a.relevance);
  const results = hits.slice(0, limit);
  return { query, count: results.length, results };
}

function widenByGraph(s: Services, seeds: [number, Candidate][], rows: Map<number, MemoryRow>, fused: Map<number, Candidate>, project: string | null): void {
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
  const fresh: number[] = [];
  for (const l of links) {
    const gain = (rrfById.get(l.seed) ?? 0) * GRAPH_HOP_FACTOR * Math.min(1, Math.max(0, l.weight));
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
  for (const [seq, row] of rowsBySeq(s, fresh)) {
    if (project && row.project !== project) fused.delete(seq);
    else rows.set(seq, row);
  }
}
