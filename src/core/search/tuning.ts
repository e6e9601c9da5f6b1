/**
 * Search: fusion, full-text pruning, the relevance score, /recent weights, the start-up warm-up,
 * query limits. What was tried and measured: docs/decisions/ (search-ranking, full-text-pruning,
 * start-up-and-background-work, recent-walk).
 */

/** Reciprocal rank fusion constant (the usual 60 flattens rank noise past the top few). */
export const RRF_K = 60;

/** Candidates taken from each of BM25 and vector search before fusion. */
export const SEARCH_CANDIDATES = 60;

/**
 * Weight of the vector list in the fusion (BM25's is 1). The hashing fallback only repeats the
 * lexical signal without IDF, so it breaks ties at 0.02 (every weight above ~0.05 lowered LoCoMo
 * recall); bge vectors carry meaning BM25 lacks: full weight (not yet measured).
 * See docs/decisions/search-ranking.md.
 */
export const VECTOR_RRF_WEIGHT: Record<"onnx" | "fallback", number> = { onnx: 1, fallback: 0.02 };

/**
 * The fallback's query vector weighs each word by its store IDF to this power (query-vector.ts):
 * at 2 the dot product is tf-idf's on both sides, which the stateless stored vectors cannot carry;
 * 2 keeps most of the LoCoMo hybrid gain without letting one rare word decide the vector list.
 * See docs/decisions/search-ranking.md.
 */
export const QUERY_IDF_POWER = 2;

/** Fused results whose graph neighbours are pulled in. */
export const GRAPH_SEEDS = 8;

/** A neighbour inherits this share of its seed's relevance, times the link weight. */
export const GRAPH_HOP_FACTOR = 0.35;

/**
 * ...and a neighbour BM25 or the vectors already found gets this share: most links join
 * near-duplicates, so adding the seed's relevance counts the same evidence twice (0.35 cost 10
 * points of recall@5 on LoCoMo). Graph traversal is for what the query does not match.
 * See docs/decisions/search-ranking.md.
 */
export const GRAPH_HOP_DIRECT_FACTOR = 0;

/**
 * bm25() scores every row an FTS5 query matches (~1 us a row); above this many rows only rows
 * holding the query's rarest words are scored (bm25Expression()): 4% of LoCoMo's store kept
 * recall@10 at 0.606 against 0.612 unpruned.
 * See docs/decisions/full-text-pruning.md.
 */
export const BM25_MAX_SCORED_ROWS = 4000;

/**
 * ...and the words ranking those rows stop once their occurrences add up to this: bm25() reads
 * every occurrence of each word to weigh it (a long common query cost ~300 ms at 100k).
 * See docs/decisions/full-text-pruning.md.
 */
export const BM25_MAX_WEIGHED_POSTINGS = 20_000;

/**
 * When even the rarest word is in more than BM25_MAX_SCORED_ROWS rows, rows must hold the 2, 3...
 * rarest words (at most this many; planTerms): AND-ing the rarest is far cheaper to score than
 * the rarest alone. Two were enough for most queries; four bounds the counting.
 * See docs/decisions/full-text-pruning.md.
 */
export const BM25_CONJUNCTION_MAX_WORDS = 4;

/**
 * Word-count warm-up at server start (warm.ts): a word's first search counts the memories holding
 * it, so the warm-up counts the words common in a random sample of WARM_SAMPLE_MEMORIES memories,
 * read WARM_SAMPLE_CHARS deep,
 * See docs/decisions/start-up-and-background-work.md.
 */
export const WARM_SAMPLE_MEMORIES = 2000;
export const WARM_SAMPLE_CHARS = 2000;

/**
 * ...the words in at least this share of them (in 0.5% of 100k memories a
 * word counts in ~0.1 ms; rarer ones stay cheap at query time),
 */
export const WARM_MIN_SHARE = 0.005;

/**
 * ...at most this many, commonest first (the costly counts go first): ~425 words pass on the
 * synthetic corpus, 410 ms of CPU at 100k, in slices after the index is ready.
 * See docs/decisions/start-up-and-background-work.md.
 */
export const WARM_MAX_WORDS = 2000;

/**
 * Whole searches at server start (warmSearches: runs of words from random memories, a share of
 * them within a project, each read this deep), so JavaScriptCore has optimised a search's code
 * before the first real ones; ~6 ms of this thread each at 100k unfiltered, ~3 within a project,
 * in slices. It replaced 100 random-vector scans, which optimised the scan alone; 150 searches,
 * 3 in 10 within a project, kept the start-up work running ~2-3 s longer at 100k.
 * See docs/decisions/start-up-and-background-work.md.
 */
export const WARM_SEARCHES = 100;
export const WARM_SEARCH_PROJECT_SHARE = 0.5;
export const WARM_SEARCH_SAMPLE_CHARS = 400;

/** Cached word counts are dropped once the store grew or shrank by this share, */
export const BM25_TERM_COUNTS_DRIFT = 0.1;

/** ...or once this many words are cached (a bound on memory). */
export const BM25_TERM_COUNTS_MAX = 50_000;

/**
 * Absolute search relevance (score.ts): cosine counts as evidence only above what unrelated texts
 * reach (BASELINE) and is full evidence at a close paraphrase (FULL), per embedder; the fallback's
 * vectors repeat the words lexical coverage already counts, so they weigh 0.3.
 * See docs/decisions/search-ranking.md.
 */
export const SCORE_COSINE_BASELINE: Record<"onnx" | "fallback", number> = { onnx: 0.5, fallback: 0.1 };
export const SCORE_COSINE_FULL: Record<"onnx" | "fallback", number> = { onnx: 0.85, fallback: 0.6 };
export const SCORE_VECTOR_WEIGHT: Record<"onnx" | "fallback", number> = { onnx: 1, fallback: 0.3 };

/**
 * Search relevance = evidence × (1 − share + share × fused rank / best fused rank): evidence caps
 * how high a memory can score, the rank orders within it (0.75 had the best LoCoMo recall@10).
 * See docs/decisions/search-ranking.md.
 */
export const SCORE_RANK_SHARE = 0.75;

/** Lexical coverage reads this much of each candidate (memories are mostly shorter; long ones state their topic early). */
export const SCORE_CONTENT_CHARS = 4000;

/** How much effective strength moves the composite score (0 = pure relevance). */
export const STRENGTH_WEIGHT = 0.2;

/** /recent importance: weight of effective strength, connections and recency. */
export const RECENT_STRENGTH_WEIGHT = 1;
export const RECENT_CONNECTION_WEIGHT = 0.35;
export const RECENT_RECENCY_WEIGHT = 1.5;

/** /recent recency fades with this time constant (days). */
export const RECENT_RECENCY_DAYS = 7;

/** Longest query text embedded or tokenised; longer input is cut, never rejected. */
export const QUERY_MAX_CHARS = 2000;

/** Most distinct keywords OR-ed into one FTS5 query. */
export const QUERY_MAX_TERMS = 32;

/** Results /search and memsvc_search return unless told (the spec's default). */
export const DEFAULT_SEARCH_LIMIT = 8;
/** Results /recent and memsvc_recent return unless told (the spec's default). */
export const DEFAULT_RECENT_LIMIT = 12;

/**
 * Rank factor of a memory marked possibly stale, in search and recall (not measured: LoCoMo has no
 * code): it drops below an equally relevant fresh one but still beats a clearly less relevant one.
 * See docs/decisions/search-ranking.md.
 */
export const STALE_RANK_FACTOR = 0.85;
