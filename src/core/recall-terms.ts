import type { Services } from "./services";
import { keywords } from "./text";
import { QUERY_MAX_CHARS, RECALL_FTS_MAX_DF_MIN, RECALL_FTS_MAX_DF_SHARE, RECALL_FTS_MAX_TERMS } from "./tuning";

interface TermStats {
  /** Memory count when `cap` was computed. */
  total: number;
  /** Document frequency above which a term is left out of the FTS query. */
  cap: number;
  checkedAt: number;
  /** Words known to be above the cap (a common word stays common). */
  common: Set<string>;
}

const stats = new WeakMap<Services, TermStats>();
const REFRESH_MS = 10 * 60_000;
const MAX_CACHED = 50_000;

function termStats(s: Services): TermStats {
  const now = s.now();
  let st = stats.get(s);
  if (!st || now - st.checkedAt > REFRESH_MS) {
    const total = s.store.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM memories").get()!.n;
    // The store grew or shrank noticeably: frequencies are stale.
    const stale = !st || Math.abs(total - st.total) > st.total * 0.1 || st.common.size > MAX_CACHED;
    const cap = Math.max(RECALL_FTS_MAX_DF_MIN, Math.floor(total * RECALL_FTS_MAX_DF_SHARE));
    st = stale || !st ? { total, cap, checkedAt: now, common: new Set<string>() } : { ...st, checkedAt: now };
    stats.set(s, st);
  }
  return st;
}

/**
 * The FTS5 expression for the recall hot path: the prompt's rarest keywords
 * only. An OR of common words ("use", "one", a speaker's name) matches a
 * third of the store, and bm25() must score every match before LIMIT: that
 * was most of the latency. Common words still count in the keyword overlap
 * gate; they just do not retrieve. Frequencies are counted with a LIMIT, and
 * the words found too common are remembered per process.
 */
export function rareTermsExpression(s: Services, prompt: string): string | null {
  const st = termStats(s);
  const count = s.store.sqlite.query<{ n: number }, [string, number]>("SELECT count(*) AS n FROM (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)");
  const scored: { term: string; df: number }[] = [];
  for (const word of new Set(keywords(prompt.slice(0, QUERY_MAX_CHARS)))) {
    if (st.common.has(word)) continue;
    // Counting stops past the cap, so a rare word costs its few rows, a common one cap + 1 once.
    const df = count.get(`"${word}"`, st.cap + 1)!.n;
    if (df > st.cap) st.common.add(word);
    else if (df > 0) scored.push({ term: word, df });
  }
  if (scored.length === 0) return null;
  scored.sort((a, b) => a.df - b.df);
  return scored
    .slice(0, RECALL_FTS_MAX_TERMS)
    .map((t) => `"${t.term}"`)
    .join(" OR ");
}
