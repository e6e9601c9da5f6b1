import { BM25_MAX_SCORED_ROWS, BM25_MAX_WEIGHED_POSTINGS, BM25_TERM_COUNTS_DRIFT, BM25_TERM_COUNTS_MAX } from "../tuning";

/*
 * Engine-neutral arithmetic of ranked full text, shared by both engines'
 * search stores (no SQL here). Both rankers (FTS5 bm25(), PostgreSQL
 * ts_rank_cd) score every row the match selects before LIMIT applies, so
 * which words select decides the latency on a large store.
 */

/**
 * Document frequencies of words, valid while the store stays near `basis`
 * memories. A count stopped at its cap is kept as such (`capped`): it
 * answers any later question with the same or a lower cap.
 */
export class TermCountCache {
  private basis = -1;
  private df = new Map<string, { n: number; capped: boolean }>();

  /** The cached count of `term` up to `cap`, or undefined when it must be counted. */
  lookup(term: string, cap: number, total: number): number | undefined {
    if (this.basis < 0 || Math.abs(total - this.basis) > this.basis * BM25_TERM_COUNTS_DRIFT || this.df.size > BM25_TERM_COUNTS_MAX) {
      this.basis = total;
      this.df = new Map();
    }
    const known = this.df.get(term);
    return known && (!known.capped || known.n >= cap) ? Math.min(known.n, cap) : undefined;
  }

  store(term: string, n: number, cap: number): number {
    this.df.set(term, { n, capped: n >= cap });
    return n;
  }
}

/** Which words select the rows to rank (`match`) and which rank them (`rank`, a superset). */
export interface TermPlan {
  match: string[];
  rank: string[];
}

/** The counting cap `planTerms` asks document frequencies with. */
export const planCap = (total: number) => Math.floor(total / 2) + 1;

/**
 * Small stores rank every word. In large ones, words in more than half the
 * store are dropped (they weigh next to nothing), and when the rest would
 * still match more than BM25_MAX_SCORED_ROWS rows, only rows holding one of
 * the rarest words are ranked, by those and the next words too (up to
 * BM25_MAX_WEIGHED_POSTINGS occurrences: a ranker reads every occurrence of
 * a word to weigh it). `df` gives counts up to planCap(total). Null: no word
 * is worth matching.
 */
export function planTerms(terms: readonly string[], total: number, df: (term: string) => number): TermPlan | null {
  if (terms.length === 0) return null;
  if (total <= BM25_MAX_SCORED_ROWS) return { match: [...terms], rank: [...terms] };
  const half = Math.floor(total / 2);
  const counted = terms.map((term) => ({ term, df: df(term) })).filter((t) => t.df <= half);
  if (counted.length === 0) return null;
  counted.sort((a, b) => a.df - b.df);
  // The rarest words, as many as BM25_MAX_SCORED_ROWS rows allow (at least one)...
  let rows = 0;
  let rare = 0;
  while (rare < counted.length && (rare === 0 || rows + counted[rare].df <= BM25_MAX_SCORED_ROWS)) rows += counted[rare++].df;
  // ...ranked by those and the next ones, up to BM25_MAX_WEIGHED_POSTINGS occurrences.
  let weighed = rare;
  while (weighed < counted.length && rows + counted[weighed].df <= BM25_MAX_WEIGHED_POSTINGS) rows += counted[weighed++].df;
  return { match: counted.slice(0, rare).map((t) => t.term), rank: counted.slice(0, weighed).map((t) => t.term) };
}
