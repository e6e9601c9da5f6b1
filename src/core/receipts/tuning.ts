/**
 * Receipts: how they are written and how much of them is kept.
 */

/**
 * Receipts wait this long in memory and are written together, in one
 * transaction: the prompt's own transaction stays the only write on its
 * path (bench/http.ts recall_index, receipts on and off).
 */
export const RECEIPT_FLUSH_MS = 200;

/** ...or as soon as this many wait (a burst of prompts from many agents). */
export const RECEIPT_FLUSH_MAX = 200;

/**
 * Receipts a flush prepares and writes per turn of the event loop (one transaction each): a
 * search's receipt costs ~1 ms of CPU (redaction, token count, gists, the row), and a 200 ms batch
 * of one client's searches written in one go held the next request ~20 ms (docs/benchmarks.md).
 */
export const RECEIPT_WRITE_SLICE = 2;

/** Prompt characters a receipt keeps (after redaction): enough to recognise the prompt, bounded per row. */
export const RECEIPT_PROMPT_CHARS = 500;

/** Near misses kept per receipt, best first: what almost made it is a handful; the rest is noise. */
export const RECEIPT_DROPPED_MAX = 8;

/** Old receipts are pruned at most this often (the bounds are days and a count: minutes of slack are fine). */
export const RECEIPT_PRUNE_EVERY_MS = 60_000;

/** Most receipts GET /recall/receipts answers at once. */
export const RECEIPT_PAGE_MAX = 200;
export const RECEIPT_PAGE_DEFAULT = 20;

/** A memory's line in a receipt: the recall block's gist length (recall/tuning.ts RECALL_GIST_CHARS). */
export const RECEIPT_GIST_CHARS = 110;
