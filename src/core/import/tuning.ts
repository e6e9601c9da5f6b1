/**
 * Import's constants, each with why.
 */

/**
 * Items written per transaction. A batch is planned (near-duplicates looked up
 * in the vector index, twins within the batch compared pairwise) before its
 * transaction and added to the index after it, so the next batch sees it: the
 * pairwise check grows with the batch, the commit count shrinks with it. Not
 * tuned against other sizes: profiled at 36k items (bench/import.ts, fallback
 * embedder), the pairwise check and the commits were each under 5% of the
 * import's CPU; SQLite's row, FTS, vector, tag and link writes were ~60%.
 */
export const IMPORT_BATCH = 256;

/** Texts per embedder call: the ONNX model's batch (as memsvc import and reembed use). */
export const IMPORT_EMBED_BATCH = 64;

/**
 * A heading section or paragraph run longer than this is split at its blocks:
 * distilled memories are a few hundred characters and search ranks short
 * focused texts best.
 */
export const IMPORT_ITEM_MAX_CHARS = 1500;

/** A note whose body is at most this long (and names no observations) stays one memory. */
export const IMPORT_SMALL_NOTE_CHARS = 800;

/** Items shown by --dry-run. */
export const IMPORT_SAMPLE = 5;

/** Links written per transaction in the link phase (after every item is stored). */
export const IMPORT_LINK_BATCH = 2000;

/**
 * Files read a chunk when an import streams a folder (markdown, agents-md,
 * claude-code): memory holds a few chunks' items instead of every item of
 * the folder (120k items read whole were ~300 MB of a 1.2 GB peak at 100k).
 */
export const IMPORT_READ_FILES = 512;
