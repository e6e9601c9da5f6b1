/**
 * /recall-index: the prompt gates, retrievers, keyword gates, session topic and session state.
 */

/** /recall-index: a prompt shorter than this (trimmed) is an acknowledgement ("ok", "go on"), not a topic. */
export const RECALL_MIN_PROMPT_CHARS = 12;

/** ...and so is one with fewer distinct keywords than this ("yes, do it"). */
export const RECALL_MIN_KEYWORDS = 2;

/** At most this many lines in the block: an index the agent reads on every prompt. */
export const RECALL_MAX_LINES = 5;

/** Candidates taken from each retriever before the gates (few: the block is short). */
export const RECALL_CANDIDATES = 20;

/**
 * Memories whose word stems recall keeps (recall/stems.ts), least recently
 * used out: a few project's worth of candidates (each prompt brings up to
 * ~50), ~3 KB each with its content, so ~12 MB at most.
 */
export const RECALL_STEM_CACHE = 4096;

/** With a project, this many project-less (global) memories may compete, under RECALL_GLOBAL_SIMILARITY. */
export const RECALL_GLOBAL_CANDIDATES = 10;

/** A memory shown in a session is not listed there again for this many turns (spec: about 30). */
export const RECALL_SUPPRESS_TURNS = 30;

/** Longest one-line gist of a memory in the block. */
export const RECALL_GIST_CHARS = 110;

/** Recall state of sessions idle this long is dropped (nightly, and whenever a new session starts). */
export const RECALL_SESSION_TTL_DAYS = 14;

/**
 * ...but a session that saw a single prompt (a one-off `claude -p`, a
 * script, a hook test) is dropped after one idle day: it is the kind that
 * piles up, and resuming one a day later costs at most one repeated index.
 */
export const RECALL_ONE_TURN_SESSION_TTL_DAYS = 1;

/**
 * Recall sessions kept at most; past it the least recently used are dropped
 * when a new one starts. A session row with its shown-memory rows is well
 * under 1 KB; 10,000 is months of heavy use by several agents.
 */
export const RECALL_SESSIONS_MAX = 10_000;

/**
 * Recall's keyword retriever leaves out words in more than this share of memories (at least
 * RECALL_FTS_MAX_DF_MIN): they cost most of the hot path's bm25() time and carry little; they
 * still count for the keyword-overlap gate.
 * See docs/decisions/recall-gates.md.
 */
export const RECALL_FTS_MAX_DF_SHARE = 0.01;
export const RECALL_FTS_MAX_DF_MIN = 200;

/** ...and uses at most this many of the prompt's rarest words. */
export const RECALL_FTS_MAX_TERMS = 8;

/**
 * Words more common than this share of the store all get the same low
 * weight in the keyword gates (counting them further costs rows, not insight).
 */
export const RECALL_IDF_MAX_DF_SHARE = 0.1;

/**
 * The block is shown when its best candidate holds at least this share of
 * the prompt's keyword weight (IDF-weighted)...
 */
export const RECALL_MIN_COVERAGE = 0.4;

/**
 * ...and the words it matches weigh at least this many times a word found in a single memory (two
 * mid-frequency words or one rare one); every other line needs RECALL_LINE_COVERAGE only (a
 * per-line similarity floor cost 4.5 points: BM25-only finds are good ones).
 * See docs/decisions/recall-gates.md.
 */
export const RECALL_MIN_EVIDENCE = 0.95;
export const RECALL_LINE_COVERAGE = 0.25;

/** A project-less memory recalled for a project must cover this much of the prompt... */
export const RECALL_GLOBAL_COVERAGE = 0.6;

/** ...and ranks as if this much weaker: a project's own memories come first unless a global one is much stronger. */
export const RECALL_GLOBAL_RANK_FACTOR = 0.5;

/** Weight of the session topic in the query (prompt = 1) when the prompt continues it. */
export const RECALL_TOPIC_WEIGHT = 0.5;

/** The topic keeps this share of its weight per prompt (a half-life of ~2 prompts when continued). */
export const RECALL_TOPIC_DECAY = 0.6;

/** A prompt with at most this many keywords ("and the tests?") cannot say it changes the topic: it continues it. */
export const RECALL_TOPIC_FOLLOWUP_KEYWORDS = 2;

/** Topic words kept per session. */
export const RECALL_TOPIC_TERMS = 12;

/**
 * A memory reported irrelevant to prompts like this one (its prompt's vector at least the
 * calibrated "related" similarity from this query) ranks as if this much weaker, and cannot open a
 * block by itself: with a better line it may still be listed, last.
 */
export const RECALL_IRRELEVANT_FACTOR = 0.25;
