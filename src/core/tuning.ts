/**
 * Every ranking and decay constant in one place. Each was chosen for agents'
 * working memory: weeks-long relevance, a few hundred to 100k memories.
 */

/** Effective strength halves after this many days without being refreshed. */
export const DECAY_HALF_LIFE_DAYS = 30;
/** Decay never takes a memory below this share of its strength: old facts stay findable. */
export const DECAY_FLOOR = 0.15;
/** Strength a new memory starts with. */
export const INITIAL_STRENGTH = 1;
/** Added to strength each time an agent fetches the memory (durable). */
export const USE_BOOST = 0.25;
/** Strength never grows past this, so one hot memory cannot dominate forever. */
export const MAX_STRENGTH = 5;

/** Reciprocal rank fusion constant (the usual 60 flattens rank noise past the top few). */
export const RRF_K = 60;
/** Candidates taken from each of BM25 and vector search before fusion. */
export const SEARCH_CANDIDATES = 60;
/** Fused results whose graph neighbours are pulled in. */
export const GRAPH_SEEDS = 8;
/** A neighbour inherits this share of its seed's relevance, times the link weight. */
export const GRAPH_HOP_FACTOR = 0.35;
/** How much effective strength moves the composite score (0 = pure relevance). */
export const STRENGTH_WEIGHT = 0.2;

/** /recent importance: weight of effective strength, connections and recency. */
export const RECENT_STRENGTH_WEIGHT = 1;
export const RECENT_CONNECTION_WEIGHT = 0.35;
export const RECENT_RECENCY_WEIGHT = 1.5;
/** /recent recency fades with this time constant (days). */
export const RECENT_RECENCY_DAYS = 7;

/** Binary-code prefilter kicks in above this many vectors; below, every vector is scored exactly. */
export const VECTOR_EXACT_BELOW = 4096;
/** Candidates kept by the binary prefilter before int8 rescoring (per requested result). */
export const VECTOR_PREFILTER_FACTOR = 8;
export const VECTOR_PREFILTER_MIN = 320;

/** Longest query text embedded or tokenised; longer input is cut, never rejected. */
export const QUERY_MAX_CHARS = 2000;
/** Most distinct keywords OR-ed into one FTS5 query. */
export const QUERY_MAX_TERMS = 32;

export const DEFAULT_SEARCH_LIMIT = 8;
export const DEFAULT_RECENT_LIMIT = 12;
export const MAX_LIMIT = 100;

/** A new memory links to at most this many of its nearest neighbours... */
export const LINK_MAX_NEAREST = 3;
/**
 * ...whose cosine similarity is at least this. The spaces differ: bge vectors
 * sit close together (unrelated texts score ~0.5), hashed vectors far apart.
 */
export const LINK_MIN_SIMILARITY: Record<"onnx" | "fallback", number> = { onnx: 0.78, fallback: 0.45 };
