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
/**
 * Vector hits below this cosine similarity are noise, not candidates: KNN
 * always returns k rows, however unrelated. The spaces differ (bge puts
 * unrelated texts near 0.4; hashed vectors of unrelated texts near 0).
 */
export const VECTOR_MIN_SIMILARITY: Record<"onnx" | "fallback", number> = { onnx: 0.45, fallback: 0.08 };
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

/**
 * Largest identity section body accepted by PUT /identity (UTF-8 bytes).
 * Sections are injected verbatim into every session start; anything bigger
 * than a long style guide would crowd out the agent's context.
 */
export const IDENTITY_SECTION_MAX_BYTES = 256 * 1024;

/* ---- Capture: POST /distill ---- */

/** A distilled fragment shorter than this (characters) cannot state a fact with its context. */
export const SUBSTANCE_MIN_CHARS = 20;
/** ...nor one with fewer topic words than this (subject, predicate, object). */
export const SUBSTANCE_MIN_KEYWORDS = 3;
/** A fragment whose lines are more than this share tool output (JSON, paths, stack frames) is noise. */
export const SUBSTANCE_MAX_NOISE_SHARE = 0.6;
/** A distilled memory longer than this is a pasted transcript, not a memory: dropped as "too long". */
export const DISTILL_MEMORY_MAX_CHARS = 4000;
/** At most this many memories are taken from one model reply; the rest are logged and ignored. */
export const DISTILL_MAX_MEMORIES_PER_CHUNK = 40;
/**
 * A /distill body needing more model calls than this is refused (413): at
 * seconds to minutes per call it would outlive any client. Capture clients
 * split long deltas into segments well below it.
 */
export const DISTILL_MAX_CHUNKS = 100;
/** Share of the model's context (llm.contextChars) kept free for its answer. */
export const DISTILL_ANSWER_SHARE = 0.25;
/** Smallest transcript chunk worth a model call, whatever the configured context. */
export const DISTILL_MIN_CHUNK_CHARS = 2000;
/** Existing memories shown to the model per chunk, so it can name relationships to them. */
export const DISTILL_CONTEXT_MEMORIES = 6;
/**
 * A new memory this close (cosine) to an existing one of the same project is
 * the same memory: the existing one is strengthened (and updated when the new
 * text adds words) instead of stored twice. Measured with the lexical
 * fallback: paraphrases score 0.80-0.93, a different fact with the same words
 * ("staging db on 5433" vs "production db on 5432") 0.62, an extension with a
 * new clause 0.73. bge-small puts paraphrases above ~0.92 and related but
 * distinct facts at 0.80-0.90.
 */
export const DISTILL_MERGE_SIMILARITY: Record<"onnx" | "fallback", number> = { onnx: 0.92, fallback: 0.75 };
/** Strength added to an existing memory each time capture finds it again. */
export const DISTILL_MERGE_BOOST = 0.2;
/** When the new text keeps this share of the old one's topic words, it replaces the old text (a restatement or correction). */
export const DISTILL_REPLACE_COVERAGE = 0.75;
/** A merged memory never grows past this; beyond it the new text is stored on its own and linked. */
export const DISTILL_MERGED_MAX_CHARS = 1500;
/** Weight of a link the model named explicitly (similarity links use the cosine). */
export const DISTILL_MODEL_LINK_WEIGHT = 0.9;
