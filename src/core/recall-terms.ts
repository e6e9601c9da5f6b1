import { documentFrequency } from "./search";
import type { Services } from "./services";
import { keywords } from "./text";
import { QUERY_MAX_CHARS, RECALL_FTS_MAX_DF_MIN, RECALL_FTS_MAX_DF_SHARE, RECALL_FTS_MAX_TERMS } from "./tuning";

/**
 * The FTS5 expression for the recall hot path: the prompt's rarest keywords
 * only. An OR of common words ("use", "one", a speaker's name) matches a
 * third of the store, and bm25() must score every match before LIMIT: that
 * was most of the latency. Common words still count in the keyword overlap
 * gate; they just do not retrieve. Word counts come from search's cache.
 */
export function rareTermsExpression(s: Services, prompt: string): string | null {
  const cap = Math.max(RECALL_FTS_MAX_DF_MIN, Math.floor(s.index.size * RECALL_FTS_MAX_DF_SHARE));
  const scored = [...new Set(keywords(prompt.slice(0, QUERY_MAX_CHARS)))]
    // Counting stops just past the cap: a common word costs cap + 1 rows once, then comes from the cache.
    .map((term) => ({ term, df: documentFrequency(s, term, cap + 1) }))
    .filter((t) => t.df > 0 && t.df <= cap);
  if (scored.length === 0) return null;
  scored.sort((a, b) => a.df - b.df);
  return scored
    .slice(0, RECALL_FTS_MAX_TERMS)
    .map((t) => `"${t.term}"`)
    .join(" OR ");
}
