/**
 * GET /index (domains and their keywords) and GET /dashboard/data.
 */

/** GET /index: most domains listed; keywords per domain from this many of its newest memories. */
export const DOMAIN_INDEX_MAX = 100;
export const DOMAIN_KEYWORD_SAMPLE = 40;
export const DOMAIN_KEYWORDS = 8;

/** Keyword candidates per domain (its most frequent words in the sample) scored for distinctiveness: each costs one cached FTS count. */
export const DOMAIN_KEYWORD_CANDIDATES = 40;

/**
 * Store-wide counts stop at this share of the store (at least the minimum):
 * a word in a fifth of all memories is generic whatever its exact count,
 * and counting its every occurrence at 100k costs milliseconds per word.
 */
export const DOMAIN_BACKGROUND_CAP_SHARE = 0.2;
export const DOMAIN_BACKGROUND_MIN_CAP = 200;

/** Weight (in pseudo-memories, at most a quarter of the store) of the store-shaped prior of the keyword rates: keeps a word seen once or twice from looking decisive. */
export const DOMAIN_PRIOR_STRENGTH = 10;

/**
 * A keyword is at least this much more common in its domain (ln 2: twice): generic words
 * ("uses", "main") measured ln 0.05-0.11 in the domain test corpus, a domain's own words ln 1.9-2.0.
 * See docs/decisions/domain-keywords.md.
 */
export const DOMAIN_KEYWORD_MIN_LIFT = Math.LN2;

/** GET /index (about a second of work at 100k memories) is reused while the memory count and newest memory are unchanged, up to this long. */
export const DOMAIN_INDEX_CACHE_MS = 60_000;

/** GET /dashboard/data: days of growth and recall history shown unless told, and the cap (a year of daily points still draws). */
export const DASHBOARD_DEFAULT_DAYS = 30;
export const DASHBOARD_MAX_DAYS = 365;

/** Primary domains drawn by name; the rest are one "other" slice (more slices than this are unreadable). */
export const DASHBOARD_TOP_DOMAINS = 8;

/** Nightly digests shown: a week of runs. */
export const DASHBOARD_DIGESTS = 7;

/** Memories shown most and never used listed as candidates to retire: a page's worth to act on. */
export const DASHBOARD_RETIRE_CANDIDATES = 10;
