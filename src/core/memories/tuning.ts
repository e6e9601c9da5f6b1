/**
 * Memories: strength and decay, writes, history, the browser's pages, anchors, migration.
 */

import { MAX_LIMIT } from "../tuning.ts";

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

/**
 * Most ingests written in one transaction when several arrive at once (group-commit.ts): shared
 * commits cut server CPU per memory (1.17 -> 0.79 ms at 1k, 8 clients); the cap only bounds how
 * long one group holds the write lock (~3-5 ms a memory at 100k).
 * See docs/decisions/ingest-batching.md.
 */
export const GROUP_COMMIT_MAX = 32;

/**
 * Earlier versions kept per memory (PATCH, restore, distill rewrites, nightly
 * merges); older ones are dropped. Distilled memories are a few hundred
 * characters, so 20 versions cost a few KB per memory that changes at all.
 */
export const MEMORY_HISTORY_MAX = 20;

/**
 * The memory browser (GET /memories/list). A page of 50 rows fills a laptop
 * screen about twice and costs ~2 ms to read at 100k memories (keyset walk of
 * an index, bench/browser.ts); 200 caps what one request can ask for.
 */
export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 200;

/** Characters of content in a list row: two lines at laptop width. */
export const LIST_PREVIEW_CHARS = 240;

/**
 * Search hits the browser filters and pages through: exactly what GET /search?limit=100 ranks, so
 * the browser orders as /search does (a larger pool would rank differently and cost more).
 */
export const LIST_SEARCH_POOL = MAX_LIMIT;

/**
 * Bounds on what one /distill or /ingest may anchor: a long session touches tens of files and the
 * longest monorepo paths are ~250 characters, so there is room without megabytes of paths.
 */
export const ANCHOR_MAX_PATHS = 200;
export const ANCHOR_MAX_PATH_CHARS = 500;

/** Changed paths named in a recall line's note; the rest are counted ("and 3 more"), so the line stays one line. */
export const STALE_NOTE_PATHS = 2;

/**
 * Rows per `memsvc migrate` batch (one target transaction each, cursor stored with it): not tuned
 * on speed (noise beat any size difference); 500 keeps a statement to ~9k bind parameters (limit
 * 65535) and an interrupted run loses at most one batch.
 * See docs/decisions/ingest-batching.md.
 */
export const MIGRATE_BATCH = 500;

/**
 * Feedback marks (wrong, outdated, irrelevant, retired) live in memory; marks another server wrote
 * (several servers over one PostgreSQL) reach this one's recall within this long.
 */
export const FEEDBACK_REFRESH_MS = 2_000;

/** Longest note a feedback may carry. */
export const FEEDBACK_NOTE_CHARS = 1_000;
