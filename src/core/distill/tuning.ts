/**
 * POST /distill: the substance gate, model chunks, merging into existing memories, anchor evidence.
 */

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

/** Strength added to an existing memory each time capture finds it again. */
export const DISTILL_MERGE_BOOST = 0.2;

/** When the new text keeps this share of the old one's topic words, it replaces the old text (a restatement or correction). */
export const DISTILL_REPLACE_COVERAGE = 0.75;

/** A merged memory never grows past this; beyond it the new text is stored on its own and linked. */
export const DISTILL_MERGED_MAX_CHARS = 1500;

/** Weight of a link the model named explicitly (similarity links use the cosine). */
export const DISTILL_MODEL_LINK_WEIGHT = 0.9;

/** A whole transcript this short that fails the substance gate ("ok thanks") is answered without a model call. */
export const DISTILL_TRIVIAL_TRANSCRIPT_CHARS = 500;

/** Longest `dropped[].content` echoed back and logged: the gist, not the bulk. */
export const DISTILL_DROPPED_PREVIEW_CHARS = 300;

/**
 * Evidence kept per anchored memory at /distill for the nightly re-check (the source segment's
 * lines). A bound, not measured: ~1.5 kB per anchored memory, and a re-check prompt stays far
 * below the smallest context (llm.contextChars 24,000).
 */
export const DISTILL_EVIDENCE_MAX_CHARS = 1500;

/** A segment line longer than this is cut into pieces before lines are picked: one long tool output cannot fill the excerpt. */
export const DISTILL_EVIDENCE_LINE_CHARS = 300;
