import type { Database } from "bun:sqlite";
import { queryKeywords } from "../../core/search/query";
import { BM25_MAX_SCORED_ROWS, BM25_MAX_WEIGHED_POSTINGS, BM25_TERM_COUNTS_DRIFT, BM25_TERM_COUNTS_MAX } from "../../core/tuning";

/**
 * Full text on SQLite: FTS5 with bm25(). The tricks here are FTS5's: bm25()
 * scores every row the expression matches before LIMIT applies (~1 µs a row),
 * so which words go into the expression decides the latency.
 */

/**
 * Document frequencies of query words, per connection, valid while the store
 * stays near `basis` memories. A count stopped at its cap is kept as such
 * (`capped`): it answers any later question with the same or a lower cap.
 */
export class TermCounts {
  private basis = -1;
  private df = new Map<string, { n: number; capped: boolean }>();
  private count: ReturnType<Database["query"]> | null = null;

  constructor(private readonly sqlite: Database) {}

  /**
   * Memories containing `term`, counted up to `cap` (the answer is `cap` when
   * there are at least that many). Shared by search, the recall index and the
   * domain index, so a word is counted once for all.
   */
  of(term: string, cap: number, total: number): number {
    if (this.basis < 0 || Math.abs(total - this.basis) > this.basis * BM25_TERM_COUNTS_DRIFT || this.df.size > BM25_TERM_COUNTS_MAX) {
      this.basis = total;
      this.df = new Map();
    }
    const known = this.df.get(term);
    if (known && (!known.capped || known.n >= cap)) return Math.min(known.n, cap);
    this.count ??= this.sqlite.query("SELECT count(*) AS n FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)");
    const n = (this.count.get(quoteOr([term]), cap) as { n: number }).n;
    this.df.set(term, { n, capped: n >= cap });
    return n;
  }
}

/**
 * An FTS5 expression of the words, each quoted (a quote inside doubled, as
 * FTS5 escapes it): no text can form FTS syntax (AND, *, -, NEAR, column filters).
 */
export const quoteOr = (terms: readonly string[]) => terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");

/** The FTS5 expression of every keyword of a query (what a plain OR search would run), or null when it has none. */
export function ftsExpression(query: string): string | null {
  const terms = queryKeywords(query);
  return terms.length ? quoteOr(terms) : null;
}

/**
 * The FTS5 expression search runs for these keywords. Small stores get every
 * word. In large ones, words in more than half the store are dropped (FTS5
 * gives them zero weight anyway), and when the rest would still match more
 * than BM25_MAX_SCORED_ROWS rows, only rows holding one of the rarest words
 * are scored: `(rare) AND (all)`, so those rows are still ranked by the other
 * words too (up to BM25_MAX_WEIGHED_POSTINGS: FTS5 reads every occurrence of
 * a word to weigh it). Counts are cached; a new word is counted once.
 */
export function bm25Expression(terms: readonly string[], total: number, df: (term: string, cap: number) => number): string | null {
  if (terms.length === 0) return null;
  if (total <= BM25_MAX_SCORED_ROWS) return quoteOr(terms);
  const half = Math.floor(total / 2);
  const counted = terms.map((term) => ({ term, df: df(term, half + 1) })).filter((t) => t.df <= half);
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

/** Prepared once per connection: the two statements of the hot path. */
export function bm25Statements(sqlite: Database) {
  const all = sqlite.query<{ seq: number }, [string, number]>("SELECT rowid AS seq FROM memories_fts WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT ?");
  const inProject = sqlite.query<{ seq: number }, [string, string, number]>(
    "SELECT f.rowid AS seq FROM memories_fts f JOIN memories m ON m.seq = f.rowid WHERE memories_fts MATCH ? AND m.project = ? ORDER BY bm25(memories_fts) LIMIT ?",
  );
  /** Seqs of the best BM25 matches of an FTS expression, optionally within one project. */
  return (expr: string, project: string | null, k: number): number[] => (project ? inProject.all(expr, project, k) : all.all(expr, k)).map((r) => r.seq);
}
