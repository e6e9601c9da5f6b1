/**
 * The SQLite engine's in-memory vector index (vector-index.ts, its kernels, its loading from vec0 and
 * the index file). Kept apart from search's ranking policy: it moves with the index into the engine.
 */

/**
 * The int8 scan's first candidates: this many times k of its best rows (at least
 * VECTOR_RESCORE_MIN) are rescored with their float vectors before the error bound is checked; at
 * 100k they settle the top 10 alone in most searches, the rest rescore a few more rows (the result
 * is exact either way). See docs/decisions/vector-index.md.
 */
export const VECTOR_RESCORE_FACTOR = 4;
export const VECTOR_RESCORE_MIN = 40;

/**
 * Rows a tile of searchMany (an import's batch, its queries grouped by project): 1024 rows are
 * 384 KB of int8, within a core's L2 cache, so every query of the group after the first reads the
 * tile from cache. A scan of 40k rows from memory ran at ~35 ns a row here against ~18 from
 * cache (load ~8). See docs/decisions/import-bulk-load.md.
 */
export const VECTOR_TILE_ROWS = 1024;

/**
 * Dimensions of each row's 4-bit code (projection.ts), part of the index file. The search no
 * longer reads the codes: a projection to 128 of 384 dimensions gives no bound on a row's score,
 * so it could only guess which rows to skip (issue 38). See docs/decisions/vector-index.md.
 */
export const VECTOR_CODE_DIMS = 128;

/**
 * The index keeps rows ordered by project (VectorIndex.cluster), so a project's search reads one
 * run of memory (~1.0 against ~2.4 ms); it reorders once the unordered tail holds TAIL_MIN rows
 * and TAIL_SHARE of the index (~40 ms every 12-14k ingests at 100k).
 * See docs/decisions/vector-index.md.
 */
export const VECTOR_CLUSTER_TAIL_MIN = 4096;
export const VECTOR_CLUSTER_TAIL_SHARE = 0.125;

/**
 * Stores with more vectors than this load their index after the server listens (BM25-only
 * meanwhile) and keep an index file; smaller ones load before, so tests and small homes never see
 * a partial index. A file this many changes behind is skipped for a vec0 scan.
 * See docs/decisions/vector-index-loading.md.
 */
export const INDEX_BACKGROUND_ABOVE = 10_000;

/**
 * Vectors read per background load step: ~7 ms steps from vec0's rows (2000 made /health take
 * 25-50 ms during a load); vec0's 1024-vector chunks are loaded in slices of at most this many.
 * See docs/decisions/vector-index-loading.md.
 */
export const INDEX_LOAD_CHUNK = 500;

/**
 * A load from vec0 first reads every memory's seq in group order, this many a step, to place each
 * vector in its group's run (placedFromVec0): ~3 ms a step.
 * See docs/decisions/vector-index-loading.md.
 */
export const INDEX_ORDER_SLICE = 8192;

/**
 * Rows given their prefilter code per event-loop turn when some lack one (after replaying changes
 * onto an index file): the SIMD encoder's ~1 us a row holds the loop ~4 ms, like a load step.
 * See docs/decisions/vector-index-loading.md.
 */
export const INDEX_CODE_SLICE = 4000;

/**
 * The index file is read into the index's arrays in reads of this size and its seq -> slot map
 * built this many rows per turn, so /health and BM25 answer while it loads (one go held the loop
 * ~200-350 ms at 100k).
 * See docs/decisions/vector-index-loading.md.
 */
export const INDEX_FILE_READ_BYTES = 4 * 1024 * 1024;
export const INDEX_RESTORE_SLICE = 20_000;

/**
 * The index file saved after a vec0 load copies the index in slices of this many rows, one turn
 * each (snapshotInSlices): in one go the copy held the loop ~35 ms at 100k, just as the first
 * searches after a first start arrive.
 * See docs/decisions/vector-index-loading.md.
 */
export const INDEX_SNAPSHOT_SLICE_ROWS = 8192;

/** Copies spoilt by writes (see saveInBackground in store/sqlite/vector/load.ts) before the save copies in one go. */
export const INDEX_SNAPSHOT_ATTEMPTS = 3;

/**
 * vector_changes rows kept behind the newest at start-up (~20 bytes each, so
 * ~4 MB): covers an index file or another server that is up to 200k writes
 * behind; further behind, they reload from vec0 (correct, just slower).
 */
export const VECTOR_CHANGES_KEEP = 200_000;
