import type { Database } from "bun:sqlite";
import { queryKeywords } from "../../core/search/query";
import { planCap, planTerms, TermCountCache, type CountTogether } from "../../core/search/full-text";

/**
 * Full text on SQLite: FTS5 with bm25(), which scores every row the
 * expression matches before LIMIT applies (~1 µs a row); which words go into
 * the expression is planned in core/search/full-text.ts.
 */

/** Word counts on one connection, cached (core/search/full-text.ts says how long a count holds). */
export class TermCounts {
  private cache = new TermCountCache();
  private count: ReturnType<Database["query"]> | null = null;

  constructor(private readonly sqlite: Database) {}

  /** Memories containing `term`, counted up to `cap` (the answer is `cap` when there are at least that many). */
  of(term: string, cap: number, total: number): number {
    return this.together([term], cap, total);
  }

  /**
   * Memories holding every one of `words`, up to `cap`, cached with the single
   * words' counts (a list's key has spaces: no keyword holds one; one word is
   * its own key). FTS5 walks the words' doclists side by side and stops at
   * `cap`: ~0.5-2.5 ms at 200k for two common words, once per pair.
   */
  together(words: readonly string[], cap: number, total: number): number {
    const key = words.join(" ");
    const known = this.cache.lookup(key, cap, total);
    if (known !== undefined) return known;
    this.count ??= this.sqlite.query("SELECT count(*) AS n FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)");
    return this.cache.store(key, (this.count.get(quoteAnd(words), cap) as { n: number }).n, cap);
  }
}

/**
 * An FTS5 expression of the words, each quoted (a quote inside doubled, as
 * FTS5 escapes it): no text can form FTS syntax (AND, *, -, NEAR, column filters).
 */
const quote = (t: string) => `"${t.replaceAll('"', '""')}"`;
export const quoteOr = (terms: readonly string[]) => terms.map(quote).join(" OR ");

/** Rows holding every one of the words (quoted as quoteOr does). */
export const quoteAnd = (terms: readonly string[]) => terms.map(quote).join(" AND ");

/** The FTS5 expression of every keyword of a query (what a plain OR search would run), or null when it has none. */
export function ftsExpression(query: string): string | null {
  const terms = queryKeywords(query);
  return terms.length ? quoteOr(terms) : null;
}

/**
 * The FTS5 expression search runs for these keywords: every word on a small
 * store; on a large one `(rare) AND (ranking words)`, or `"a" AND "b"` when
 * every word is common, as planTerms decides, so bm25() scores few rows.
 * Counts are cached; a new word (or pair) is counted once. `minRows`: the
 * rows a search wants (its k), which a conjunction must leave.
 */
export function bm25Expression(
  terms: readonly string[],
  total: number,
  df: (term: string, cap: number) => number,
  together?: CountTogether,
  minRows = 1,
): string | null {
  const cap = planCap(total);
  const plan = planTerms(terms, total, (t) => df(t, cap), together, minRows);
  if (!plan) return null;
  if (plan.together) return quoteAnd(plan.match);
  const rank = quoteOr(plan.rank);
  return plan.match.length === plan.rank.length ? rank : `(${quoteOr(plan.match)}) AND (${rank})`;
}

/**
 * The two statements of the hot path, as text: both the main connection and
 * the full-text reader's (fts-reader.ts) prepare them.
 *
 * The project test reads the small index memories_project(project, seq), not
 * the memory rows: the planner's own choice (a rowid lookup into memories,
 * whose rows carry the content) cost ~3 us a matching row, before bm25()
 * (computed only for rows that pass). At 200k (load ~15): 12 / 26 ms CPU p50 /
 * p95 for the bench's project queries that way, 2.7 / 6.4 ms with the index,
 * same rows.
 */
export const BM25_SQL = {
  all: "SELECT rowid AS seq FROM memories_fts WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT ?",
  inProject: `SELECT f.rowid AS seq FROM memories_fts f WHERE memories_fts MATCH ?1
       AND EXISTS (SELECT 1 FROM memories m INDEXED BY memories_project WHERE m.project = ?2 AND m.seq = f.rowid)
     ORDER BY bm25(memories_fts) LIMIT ?3`,
};

/** Prepared once per connection: the two statements of the hot path. */
export function bm25Statements(sqlite: Database) {
  const all = sqlite.query<{ seq: number }, [string, number]>(BM25_SQL.all);
  const inProject = sqlite.query<{ seq: number }, [string, string, number]>(BM25_SQL.inProject);
  /** Seqs of the best BM25 matches of an FTS expression, optionally within one project. */
  return (expr: string, project: string | null, k: number): number[] => (project ? inProject.all(expr, project, k) : all.all(expr, k)).map((r) => r.seq);
}
