import { BM25_CONJUNCTION_MAX_WORDS, BM25_MAX_SCORED_ROWS, BM25_MAX_WEIGHED_POSTINGS, BM25_TERM_COUNTS_DRIFT, BM25_TERM_COUNTS_MAX } from "./tuning";

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

/**
 * Which words select the rows to rank (`match`) and which rank them (`rank`,
 * a superset). `together`: a row must hold every match word (and rank is match).
 */
export interface TermPlan {
  match: string[];
  rank: string[];
  together?: boolean;
}

/** Memories holding every one of `words`, counted up to `cap` (the answer is `cap` when there are at least that many). */
export type CountTogether = (words: readonly string[], cap: number) => number;

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
 *
 * When even the rarest word is in more than BM25_MAX_SCORED_ROWS rows (every
 * word of the query common), and the engine can count rows holding several
 * words (`together`), the rows must hold the two rarest words, or the three
 * rarest..., the fewest that bring the rows under BM25_MAX_SCORED_ROWS while
 * at least `minRows` remain, ranked by those words alone: the ranker's cost
 * is per row scored and per word instance (a word both in the selection and
 * the ranking is two phrases to FTS5), so `"a" AND "b"` costs a fraction of
 * `("a") AND ("a" OR "b")` over the rows holding a. See BM25_CONJUNCTION_*.
 */
export function planTerms(terms: readonly string[], total: number, df: (term: string) => number, together?: CountTogether, minRows = 1): TermPlan | null {
  if (terms.length === 0) return null;
  if (total <= BM25_MAX_SCORED_ROWS) return { match: [...terms], rank: [...terms] };
  const counted = rarestFirst(terms, total, df);
  if (counted.length === 0) return null;
  if (together && counted[0].df > BM25_MAX_SCORED_ROWS) {
    const all = conjunction(
      counted.map((t) => t.term),
      together,
      Math.max(1, minRows),
    );
    if (all) return { match: all, rank: all, together: true };
  }
  // The rarest words, as many as BM25_MAX_SCORED_ROWS rows allow (at least one)...
  let rows = 0;
  let rare = 0;
  while (rare < counted.length && (rare === 0 || rows + counted[rare].df <= BM25_MAX_SCORED_ROWS)) rows += counted[rare++].df;
  // ...ranked by those and the next ones, up to BM25_MAX_WEIGHED_POSTINGS occurrences.
  let weighed = rare;
  while (weighed < counted.length && rows + counted[weighed].df <= BM25_MAX_WEIGHED_POSTINGS) rows += counted[weighed++].df;
  return { match: counted.slice(0, rare).map((t) => t.term), rank: counted.slice(0, weighed).map((t) => t.term) };
}

/**
 * The word lists (rarest first, two words or more) planTerms may ask
 * `together` about for these words: for an engine that counts asynchronously
 * and answers planTerms from those counts. Empty when no conjunction is
 * considered. Same order and caps as planTerms.
 */
export function conjunctionCandidates(terms: readonly string[], total: number, df: (term: string) => number): string[][] {
  if (total <= BM25_MAX_SCORED_ROWS) return [];
  const counted = rarestFirst(terms, total, df);
  if (counted.length < 2 || counted[0].df <= BM25_MAX_SCORED_ROWS) return [];
  const out: string[][] = [];
  for (let n = 2; n <= Math.min(counted.length, BM25_CONJUNCTION_MAX_WORDS); n++) out.push(counted.slice(0, n).map((t) => t.term));
  return out;
}

/**
 * The fewest rarest words (two or more, at most BM25_CONJUNCTION_MAX_WORDS)
 * whose rows together number at most BM25_MAX_SCORED_ROWS, or the most that
 * still leave `minRows` rows; null when even the two rarest leave fewer.
 */
function conjunction(rarestFirst: readonly string[], together: CountTogether, minRows: number): string[] | null {
  let best: string[] | null = null;
  for (let n = 2; n <= Math.min(rarestFirst.length, BM25_CONJUNCTION_MAX_WORDS); n++) {
    const words = rarestFirst.slice(0, n);
    const rows = together(words, BM25_MAX_SCORED_ROWS + 1);
    if (rows < minRows) break;
    best = words;
    if (rows <= BM25_MAX_SCORED_ROWS) break;
  }
  return best;
}

/** The words in at most half the memories (the others rank nothing), with their counts, rarest first. */
function rarestFirst(terms: readonly string[], total: number, df: (term: string) => number): { term: string; df: number }[] {
  const half = Math.floor(total / 2);
  return terms
    .map((term) => ({ term, df: df(term) }))
    .filter((t) => t.df <= half)
    .sort((a, b) => a.df - b.df);
}
