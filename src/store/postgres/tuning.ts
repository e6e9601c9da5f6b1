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
 * PostgreSQL: pgvector HNSW's candidate list per search (hnsw.ef_search, raised to k when larger):
 * 100 is the first value above issue 13's 0.95 recall@10 bar with room (0.983 on the bench).
 * See docs/decisions/postgres-vector-search.md.
 */
export const PG_HNSW_EF_SEARCH = 100;

/**
 * PostgreSQL: how old the count of stored vectors may get before a read refreshes it (in the
 * background); IDF and /health tolerate a second's lag, and counting per search costs a scan.
 */
export const PG_VECTOR_COUNT_REFRESH_MS = 1000;
