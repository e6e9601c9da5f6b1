/**
 * The SQLite engine: page caches, WAL and its checkpoint worker, the /recent walk, cached counts.
 */

/**
 * SQLite /recent (search-recent.ts) walks three index lists (touched, link count, strength) until
 * nothing unread can beat its k-th row (Fagin's threshold algorithm): first batches of the newest
 * rows and of the other two lists; batches double. 64-1024 measured alike; 8 was slow on hubs.
 * See docs/decisions/recent-walk.md.
 */
export const RECENT_WALK_FIRST = 1024;
export const RECENT_LIST_FIRST = 64;

/**
 * The link-count lists /recent walks (migration 0014 spells this number) hold only memories with
 * at least this many links: full lists rewrote ~18 index pages per ingest; 99.9% of bench memories
 * have fewer. Changing it needs a new migration.
 * See docs/decisions/recent-walk.md.
 */
export const RECENT_LINK_LIST_FROM = 8;

/**
 * SQLite: how old the memory count word weights read (VectorMirror.memories), and the re-embed
 * cursor, may get (~12.8 reads per /recall-index); dropped at once by this process's own writes.
 * See docs/decisions/vector-index-loading.md.
 */
export const MEMORY_COUNT_REFRESH_MS = 1000;

/**
 * SQLite page cache of the store's connection (PRAGMA cache_size = -this), small on purpose: after
 * a page split the COMMIT scans the whole cache (pcache1TruncateUnsafe), so 64 MB cost 3.15 ms CPU
 * an ingest against 2.32 at 8 MB; reads did not notice (the OS caches the file).
 * See docs/decisions/sqlite-cache-and-wal.md.
 */
export const SQLITE_CACHE_KIB = 8192;

/**
 * Page cache of the full-text reader's connection (fts-reader.ts, bm25() in a worker beside the
 * vector scan): the same as SQLITE_CACHE_KIB, since 8 and 64 MB read alike.
 * See docs/decisions/sqlite-cache-and-wal.md.
 */
export const FTS_READER_CACHE_KIB = 8192;

/**
 * WAL pages before SQLite checkpoints (default 1000): one ingest dirties the same hot pages again
 * and again, and a longer WAL copies each once per checkpoint (6.5 -> 3.9-5.0 ms an ingest at
 * 30k). Used when the checkpoint worker cannot run; the WAL may reach ~32 MB.
 * See docs/decisions/sqlite-cache-and-wal.md.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 8000;

/**
 * The checkpoint worker (checkpointer.ts) polls the WAL header every POLL_MS and checkpoints
 * PASSIVE past THRESHOLD_PAGES; the main connection's autocheckpoint becomes CAP_PAGES. Ingest
 * rose 254 -> 295/s over HTTP at 100k, /search p95 32.0 -> 26.3 ms.
 * See docs/decisions/sqlite-cache-and-wal.md.
 */
export const WAL_WORKER_THRESHOLD_PAGES = 2000;
export const WAL_WORKER_POLL_MS = 50;
export const WAL_WORKER_CAP_PAGES = 16_000;

/**
 * Where the worker starts the WAL over (restart()): before, the WAL only restarted at the cap, in
 * a COMMIT that copied and fsynced the rest (15-18 % of a one-client ingest's wall time).
 * See docs/decisions/sqlite-cache-and-wal.md.
 */
export const WAL_WORKER_RESTART_PAGES = 6000;

/** Longest the worker waits for a main-thread write to end before its gated round (it tries again at its next look). */
export const WAL_WORKER_GATE_WAIT_MS = 20;

/**
 * Memories (insertMemories) or links (addLinks) written in one call from which the triggers that
 * keep FTS5, the primary domain, link counts and row counts run once per call, not once per row
 * (bulk-load.ts). Below it the schema change (DROP and CREATE TRIGGER, statements prepared again)
 * costs more than it saves; an ingest writes 1-32 memories a call.
 * See docs/decisions/import-bulk-load.md.
 */
export const BULK_LOAD_FROM = 64;

/**
 * Page cache of a connection once it has taken the bulk path (an import's process): at 18k items
 * 64 MB took 0.05 ms CPU an item off the batch's transaction against SQLITE_CACHE_KIB (the
 * random-id indexes outgrow 8 MB; a commit's cache scan costs less than the misses here, with
 * 256 items a commit). Raised once, never lowered: a server never takes the bulk path.
 * See docs/decisions/import-bulk-load.md.
 */
export const BULK_LOAD_CACHE_KIB = 65536;
