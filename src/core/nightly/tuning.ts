/**
 * Nightly consolidation: learnings, ignored and faded memories, merges, runs and their schedule.
 */

/** GET /learnings and memsvc_learnings: default look-back (spec: 7 days) and its cap. */
export const LEARNINGS_DEFAULT_DAYS = 7;
export const LEARNINGS_MAX_DAYS = 365;

/** Most learnings returned; the session-start block lists fewer, each cut to a paragraph. */
export const LEARNINGS_MAX = 50;
export const LEARNINGS_BLOCK_MAX = 12;
export const LEARNINGS_BLOCK_CHARS = 400;

/** Nightly consolidation: most memories sent to the model in one call (the context budget cuts first). */
export const NIGHTLY_CHUNK_MAX_MEMORIES = 40;

/** Longest memory text sent to the model; distilled memories are far shorter. */
export const NIGHTLY_MEMORY_MAX_CHARS = 1500;

/** Learnings kept from one model answer; more is the model padding its list. */
export const NIGHTLY_MAX_LEARNINGS_PER_CALL = 6;

/** A learning shorter than this says nothing actionable. */
export const NIGHTLY_MIN_LEARNING_CHARS = 20;

/**
 * A memory shown at least IGNORED_MIN_SHOWN times, shown on the consolidated day and not fetched
 * since, is ignored: its strength is multiplied by IGNORED_DECAY_FACTOR (not below IGNORED_MIN_STRENGTH),
 * since showing refreshes the decay clock and it would otherwise never fade.
 */
export const IGNORED_MIN_SHOWN = 3;
export const IGNORED_DECAY_FACTOR = 0.9;
export const IGNORED_MIN_STRENGTH = 0.2;

/**
 * Pruning deletes a memory only when all hold: effective strength below PRUNE_STRENGTH_FLOOR
 * (decay alone stops at DECAY_FLOOR, so it takes ignored showings), never used, older than
 * PRUNE_MIN_AGE_DAYS, and not a learning.
 */
export const PRUNE_STRENGTH_FLOOR = 0.1;
export const PRUNE_MIN_AGE_DAYS = 30;

/** Most deletions per run: a bad tuning change cannot empty the store in one night. */
export const PRUNE_MAX_PER_RUN = 1000;

/** Most merges per run. */
export const MERGE_MAX_PER_RUN = 500;

/** A scheduled run also catches up on days of this look-back that have no finished run (server was down). */
export const NIGHTLY_CATCHUP_DAYS = 3;

/**
 * Days left partial (learnings owed: no model then, or it failed) are taken
 * up again by runs with a model for this long; older ones are left as they
 * are (a month-old day's lessons are mostly stale, and its memories may be pruned).
 */
export const NIGHTLY_OWED_DAYS = 30;

/** A run whose owner has not reported for this long is taken to be dead and is resumed. */
export const NIGHTLY_LEASE_MS = 15 * 60_000;

/**
 * Heartbeats per lease while a run works: at 4 a run survives three missed
 * beats (a stalled event loop, a busy database) before another server may
 * take it over. Not measured: a margin, as leases usually are.
 */
export const NIGHTLY_HEARTBEATS_PER_LEASE = 4;

/**
 * Marked anchors one nightly re-check step reads (longest-marked first): a bound on the read, not
 * tuned; the model-call cap spends far fewer, and the rest is reached on later nights.
 */
export const RECHECK_SCAN_MAX = 2000;

/**
 * The server sets up its nightly schedule this long after it starts: the first local-time
 * computation loads time-zone data and croner's set-up (~13 ms CPU in all), which ran before the
 * first /health answer. The expression is still checked at start-up.
 * See docs/decisions/start-up-and-background-work.md.
 */
export const NIGHTLY_SCHEDULE_DELAY_MS = 2000;
