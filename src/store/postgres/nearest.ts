import { PG_EXACT_GROUP_ROWS, PG_HNSW_EF_SEARCH } from "./tuning";

/**
 * The statement of vector search on PostgreSQL (search.ts, nearest), apart so
 * bench/pg-plans.ts can EXPLAIN exactly what the engine sends.
 *
 * Without a project: pgvector's HNSW index at ef_search. With one (a project,
 * or "" for the memories of no project): an exact scan of the group's rows
 * when it holds at most `exactRows`, else HNSW with the iterative scan. The
 * choice is made inside the statement: the group's rows are counted from
 * memories' project index, up to exactRows + 1 (a thin index: ~100 buffers for
 * 12k rows); when they stop short of that, the group's vectors are read from
 * memory_vec_project (migration 0010: a project's vectors together, an
 * index-only scan), every one scored and sorted (OFFSET 0: the planner cannot
 * push the ORDER BY into the HNSW index); otherwise a one-time filter skips
 * that branch and runs the HNSW one. The exact branch orders by similarity
 * descending and seq ascending: the engine's rule for ties.
 */

/** pgvector's text form of a vector (numbers only: safe to inline). */
export const vectorText = (v: Float32Array) => `[${Array.from(v).join(",")}]`;

/** A text literal to inline where no parameter can go: E'' with backslashes and quotes escaped holds whatever standard_conforming_strings says. */
export const sqlString = (v: string) => `E'${v.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;

export interface NearestOptions {
  efSearch?: number;
  /** The largest group scanned exactly (default PG_EXACT_GROUP_ROWS); 0 sends every filtered search to HNSW. */
  exactRows?: number;
}

/**
 * The settings (for this transaction alone) and the query, as one
 * simple-protocol message: no parameters, the values inlined (the vector is
 * numbers only, the project a quoted literal, k and the limits integers).
 * Results: [settings row, rows of { seq, similarity }].
 */
export function nearestStatement(schema: string, vector: Float32Array, k: number, project: string | null | undefined, opts: NearestOptions = {}) {
  const S = schema;
  const K = Math.trunc(k);
  const q = `'${vectorText(vector)}'::vector`;
  // ef_search bounds how many candidates HNSW returns (at least k), and the
  // iterative scan keeps walking the graph when a project filter rejects them
  // (pgvector 0.8+). Both are set for this query alone (is_local) in the same
  // message as the query: one round trip, no setting left on a pooled
  // connection, and it holds behind a transaction-mode pooler too.
  const ef = Math.max(Math.trunc(opts.efSearch ?? PG_HNSW_EF_SEARCH), K);
  const settings = `SELECT set_config('hnsw.ef_search', '${ef}', true), set_config('hnsw.iterative_scan', 'relaxed_order', true)`;
  // Vectors past a pending re-embed's cursor are of the old space: full text finds them until it passes.
  const cursor = `coalesce((SELECT value::bigint FROM ${S}.meta WHERE key = 'reembed_cursor'), 9223372036854775807)`;
  if (project === undefined || project === null) {
    return `${settings};
      SELECT v.seq::float8 AS seq, 1 - (v.embedding <=> ${q}) AS similarity FROM ${S}.memory_vec v
       WHERE v.seq <= ${cursor} ORDER BY v.embedding <=> ${q} LIMIT ${K}`;
  }
  const exactRows = Math.max(0, Math.trunc(opts.exactRows ?? PG_EXACT_GROUP_ROWS));
  const group = (t: string) => (project === "" ? `${t}.project IS NULL` : `${t}.project = ${sqlString(project)}`);
  const hnsw = (gate: string) => `SELECT v.seq::float8 AS seq, 1 - (v.embedding <=> ${q}) AS similarity FROM ${S}.memory_vec v
     WHERE ${group("v")}${gate} AND v.seq <= ${cursor} ORDER BY v.embedding <=> ${q} LIMIT ${K}`;
  if (exactRows === 0) return `${settings};\n    ${hnsw("")}`;
  return `${settings};
    WITH small AS MATERIALIZED (SELECT count(*) <= ${exactRows} AS yes FROM (SELECT 1 FROM ${S}.memories m WHERE ${group("m")} LIMIT ${exactRows + 1}) g)
    SELECT * FROM (
      SELECT x.seq::float8 AS seq, 1 - (x.embedding <=> ${q}) AS similarity
        FROM (SELECT v.seq, v.embedding FROM ${S}.memory_vec v WHERE ${group("v")} AND (SELECT yes FROM small) AND v.seq + 0 <= ${cursor} OFFSET 0) x
       ORDER BY 2 DESC, 1 LIMIT ${K}) exact
    UNION ALL
    SELECT * FROM (${hnsw(" AND NOT (SELECT yes FROM small)")}) approximate`;
}
