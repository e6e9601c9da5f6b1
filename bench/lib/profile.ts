import { loadConfig } from "../../src/config";
import { silentLogger } from "../../src/core/log";
import { queryKeywords, queryVector, rank } from "../../src/core/search";
import { bm25Expression, ftsExpression, TermCounts } from "../../src/store/sqlite/search-fts";
import { benchServices, sqliteOf } from "./services";
import { DEFAULT_SEARCH_LIMIT, SEARCH_CANDIDATES } from "../../src/core/search/tuning";
import { FallbackEmbedder } from "../../src/embed";
import type { Query } from "./corpus";
import { round, summarize, type Summary } from "./stats";

export interface RankProfile {
  /** rank() as a whole, in the bench process (no HTTP, no JSON). */
  rank_ms: Summary;
  /** Its phases, timed separately with the same statements. */
  phases_ms: { query_embedding: Summary; bm25: Summary; vector: Summary; rows_graph_scoring_p50: number };
  /** Rows an OR of every query word matches: what bm25() would have to score before LIMIT. */
  bm25_all_words_matching_rows: Summary;
  /** Rows the expression search actually runs matches (rarest words only in a large store). */
  bm25_scored_rows: Summary;
  index_load_ms: number;
}

/**
 * Where /search time goes: opens the store like the server does (index
 * loaded from vec0) and times rank() and its parts on the same queries.
 */
export async function profileRank(home: string, queries: Query[]): Promise<RankProfile> {
  const config = loadConfig({ MEMSVC_HOME: home, MEMSVC_OFFLINE: "1" });
  const t0 = performance.now();
  const s = benchServices(config, { embedder: new FallbackEmbedder(), log: silentLogger });
  // Above INDEX_BACKGROUND_ABOVE the index loads in the background: profiling before it is ready
  // timed an empty vector phase and unplanned full text (every word, as on a store of 0 memories).
  await s.indexState.ready;
  const indexLoad = performance.now() - t0;
  const db = sqliteOf(s).sqlite;
  const all = db.query<{ seq: number }, [string, number]>(
    "SELECT rowid AS seq FROM memories_fts WHERE memories_fts MATCH ? ORDER BY bm25(memories_fts) LIMIT ?",
  );
  // The same statement as search-fts.ts's bm25Statements.
  const inProject = db.query<{ seq: number }, [string, string, number]>(
    `SELECT f.rowid AS seq FROM memories_fts f WHERE memories_fts MATCH ?1
       AND EXISTS (SELECT 1 FROM memories m INDEXED BY memories_project WHERE m.project = ?2 AND m.seq = f.rowid)
     ORDER BY bm25(memories_fts) LIMIT ?3`,
  );
  const matching = db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM memories_fts WHERE memories_fts MATCH ?");
  const out = { embed: [] as number[], bm25: [] as number[], vector: [] as number[], rank: [] as number[], all: [] as number[], scored: [] as number[] };
  const lap = <T>(into: number[], fn: () => T): T => {
    const t = performance.now();
    const v = fn();
    into.push(performance.now() - t);
    return v;
  };
  const lapAsync = async <T>(into: number[], fn: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const v = await fn();
    into.push(performance.now() - t);
    return v;
  };
  const sync = s.storage.search.sync!;
  // Pair counts in a cache of this profile's own (the store's is private to it), as search plans them.
  const counts = new TermCounts(db);
  const together = (words: readonly string[], cap: number) => counts.together(words, cap, s.index.memories);
  const used = (query: string) => bm25Expression(queryKeywords(query), s.index.memories, sync.documentFrequency, together, SEARCH_CANDIDATES);
  // Warm the page cache, the word counts and the JIT, as the HTTP run did.
  for (const q of queries) await rank(s, q.query, await queryVector(s, q.query), DEFAULT_SEARCH_LIMIT, q.project);
  for (const q of queries) {
    // As /search builds it: hashed, each word weighted by its IDF in the store.
    const vector = await lapAsync(out.embed, () => queryVector(s, q.query));
    lap(out.bm25, () => {
      const expr = used(q.query);
      if (expr) q.project ? inProject.all(expr, q.project, SEARCH_CANDIDATES) : all.all(expr, SEARCH_CANDIDATES);
    });
    lap(out.vector, () => sync.nearest(vector, SEARCH_CANDIDATES, q.project));
    await lapAsync(out.rank, () => rank(s, q.query, vector, DEFAULT_SEARCH_LIMIT, q.project));
    const every = ftsExpression(q.query);
    const scored = used(q.query);
    out.all.push(every ? matching.get(every)!.n : 0);
    out.scored.push(scored ? matching.get(scored)!.n : 0);
  }
  void s.close();
  const p50 = (xs: number[]) => summarize(xs, 3).p50;
  const rest = p50(out.rank) - p50(out.bm25) - p50(out.vector);
  return {
    rank_ms: summarize(out.rank),
    phases_ms: {
      query_embedding: summarize(out.embed, 3),
      bm25: summarize(out.bm25),
      vector: summarize(out.vector),
      rows_graph_scoring_p50: round(Math.max(0, rest), 2),
    },
    bm25_all_words_matching_rows: summarize(out.all, 0),
    bm25_scored_rows: summarize(out.scored, 0),
    index_load_ms: Math.round(indexLoad),
  };
}
