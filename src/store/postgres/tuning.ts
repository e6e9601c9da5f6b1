/**
 * The PostgreSQL engine: /recent candidates, pgvector HNSW, cached counts.
 */

/**
 * PostgreSQL's /recent takes its first floor from this many of the most
 * recently touched memories (search.ts, recentBounded): enough that the
 * limit's best among them is close to the answer's, so the walk that follows
 * reaches back no further than it must; each costs an index entry.
 */
export const RECENT_FIRST_ROWS = 200;

/**
 * PostgreSQL: pgvector HNSW's candidate list per search (hnsw.ef_search, raised to k when larger).
 * 200: the smallest of those measured that reaches issue 36's recall@10 of 0.95 against an exact
 * scan at 100k memories (0.956; 100 gave 0.91, 400 0.986), for about 1.1-1.5x the index's latency at
 * 100. See docs/decisions/postgres-vector-search.md.
 */
export const PG_HNSW_EF_SEARCH = 200;

/**
 * PostgreSQL: how old the count of stored vectors may get before a read refreshes it (in the
 * background); IDF and /health tolerate a second's lag, and counting per search costs a scan.
 */
export const PG_VECTOR_COUNT_REFRESH_MS = 1000;

/**
 * PostgreSQL: a vector search within a project (or within the memories of no project) scores
 * every row of the group exactly when it holds at most this many, and goes to HNSW's iterative
 * scan only when larger (nearest.ts). Measured at 100k (bench/pg-project-search.ts): the exact
 * scan costs ~250 buffers and ~1.25 ms of database CPU per 1,000 rows (11.7k rows: 2.9k buffers,
 * 14.5 ms), recall 1; HNSW with a filter for groups of 3.6-11.7k rows read 4.5-9k buffers for
 * 8-18 ms and found 0.87-0.95 of the top 10; unfiltered HNSW 4.0k buffers, 7.5 ms, 0.96. Up to
 * 15,000 the exact scan reads no more buffers than one unfiltered HNSW search, for at most ~2.5x its CPU.
 */
export const PG_EXACT_GROUP_ROWS = 15_000;
