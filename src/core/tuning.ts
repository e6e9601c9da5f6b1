/**
 * Constants shared by more than one capability: background work beside live traffic (slices.ts) and
 * the spec's largest page of results. Each capability keeps its own in its folder's tuning.ts.
 */

/**
 * Work beside live traffic (warm-up, calibration; slices.ts) yields to requests after this much,
 * so a request waits about one slice plus one unit of work; 0 (yield after every unit) starved
 * the warm-up while searches came back to back.
 * See docs/decisions/start-up-and-background-work.md.
 */
export const BACKGROUND_SLICE_MS = 2;

/**
 * ...and, once a slice is spent while requests arrive back to back (one in the last
 * BACKGROUND_QUIET_MS), it waits for a lull, up to BACKGROUND_DEFER_MAX_MS in all: an agent's
 * prompts come seconds apart, so the work runs between them instead of beside them.
 * See docs/decisions/start-up-and-background-work.md.
 */
export const BACKGROUND_QUIET_MS = 50;
export const BACKGROUND_DEFER_MAX_MS = 30_000;

/** Largest `limit` any list operation accepts (search, graph lists; the browser's search pool). */
export const MAX_LIMIT = 100;
