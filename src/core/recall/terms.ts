import { documentFrequency } from "../search";
import type { Services } from "../services";
import { keywords, stem } from "../text";
import { QUERY_MAX_CHARS, QUERY_MAX_TERMS } from "../search/tuning";
import { RECALL_FTS_MAX_DF_MIN, RECALL_FTS_MAX_DF_SHARE, RECALL_FTS_MAX_TERMS, RECALL_IDF_MAX_DF_SHARE } from "./tuning";

/** A prompt keyword with how many memories hold it and how much it says (IDF). */
export interface PromptTerm {
  term: string;
  stem: string;
  df: number;
  idf: number;
}

/** log(1 + N / (df + 1)): a word in one memory of 2,760 weighs ~7.2, one in every other memory ~1.1. */
export const idfOf = (df: number, total: number) => Math.log(1 + total / (df + 1));

/**
 * The prompt's keywords with their document frequency. Counting stops at
 * RECALL_IDF_MAX_DF_SHARE of the store: any word more common than that gets
 * the same low weight, and one count of a common word costs ~cap rows once
 * (search's cache keeps it).
 */
export function promptTerms(s: Services, prompt: string): Promise<PromptTerm[]> {
  return weighTerms(s, keywords(prompt.slice(0, QUERY_MAX_CHARS)).slice(0, QUERY_MAX_TERMS * 4));
}

export async function weighTerms(s: Services, words: readonly string[]): Promise<PromptTerm[]> {
  const total = Math.max(1, s.index.memories);
  const cap = Math.max(RECALL_FTS_MAX_DF_MIN, Math.floor(total * RECALL_IDF_MAX_DF_SHARE));
  // Counted at once: a word not yet counted is a round trip on PostgreSQL (cached after).
  const unique = [...new Set(words)];
  const dfs = await Promise.all(unique.map((term) => documentFrequency(s, term, cap + 1)));
  return unique.map((term, i) => ({ term, stem: stem(term), df: dfs[i], idf: idfOf(Math.min(dfs[i], cap), total) }));
}

/**
 * The words full text retrieves by on the recall hot path: the rarest keywords only. An
 * OR of common words ("use", "one", a speaker's name) matches a third of the
 * store, and bm25() must score every match before LIMIT: that was most of
 * the latency. Common words still count in the gates; they just do not
 * retrieve.
 */
export function rareTerms(s: Services, terms: readonly PromptTerm[]): string[] {
  const cap = Math.max(RECALL_FTS_MAX_DF_MIN, Math.floor(s.index.memories * RECALL_FTS_MAX_DF_SHARE));
  const scored = terms.filter((t) => t.df > 0 && t.df <= cap).sort((a, b) => a.df - b.df);
  return scored.slice(0, RECALL_FTS_MAX_TERMS).map((t) => t.term);
}
