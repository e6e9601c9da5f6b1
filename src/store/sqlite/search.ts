import type { Database } from "bun:sqlite";
import type { IndexState as CoreIndexState, Pause, ScoringRow, SearchStore, VectorIndexControl } from "../../core/search/store";
import { saveIndex, startIndex, syncIndex, VectorIndex, type IndexContext, type IndexState } from "./vector";
import { MEMORY_COUNT_REFRESH_MS } from "./tuning";
import { cachedMeta, getMeta } from "./open";
import { bm25Expression, bm25Statements, quoteOr, TermCounts } from "./search-fts";
import { recentRows } from "./search-recent";
import { contentsOf, randomSeqs, vectorsOf } from "./sample";
import type { SqliteHandle } from "./storage";
import { MEMORY_COUNT_SQL } from "./row-counts";

/**
 * search/ on SQLite. Vector search is the exact int8 index in this process's
 * memory (vector/load.ts keeps it in step with vec0 and other processes);
 * full text is FTS5 bm25() with the expression trimmed for large stores
 * (search-fts.ts). Everything here answers synchronously underneath: the
 * async interface costs one resolved promise per call (microseconds), which
 * bench/http.ts shows within noise of the synchronous version.
 */

/**
 * One index and one word-count cache per connection: the storage object of a
 * transaction (storage.ts builds a second one over the same connection) must
 * see the same index as the one outside it.
 */
interface Shared {
  index: VectorIndex;
  state: IndexState | null;
  ctx: IndexContext | null;
  counts: TermCounts;
  bm25: ReturnType<typeof bm25Statements>;
  countMemories: () => number;
}
const shared = new WeakMap<Database, Shared>();

/** The index has finished loading: it holds every memory's vector of the active space. */
const loaded = (sh: Shared) => sh.state?.status === "ready" && !sh.index.loading;

function sharedOf(h: SqliteHandle): Shared {
  let sh = shared.get(h.sqlite);
  if (!sh) {
    const counted = memoryCounter(h.sqlite);
    const self: Shared = {
      index: new VectorIndex(),
      state: null,
      ctx: null,
      counts: new TermCounts(h.sqlite),
      bm25: bm25Statements(h.sqlite),
      countMemories: () => 0,
    };
    // A complete index holds every memory: its size is exact and moves with each write at once.
    // The cursor is cached (it is read once per prompt word): word weights tolerate the count's lag already.
    self.countMemories = () => (loaded(self) && cachedMeta(h, "reembed_cursor", MEMORY_COUNT_REFRESH_MS) === null ? self.index.size : counted());
    self.index.countMemories = self.countMemories;
    shared.set(h.sqlite, self);
    sh = self;
  }
  return sh;
}

/**
 * The store's memory count for word weights while the index is not complete,
 * read at most every MEMORY_COUNT_REFRESH_MS (row_counts: one row; it was a
 * count(*), ~2 ms warm at 100k; word weights tolerate a second's lag).
 */
function memoryCounter(sqlite: Database): () => number {
  let n = 0;
  let at = -Infinity;
  const count = sqlite.query<{ n: number }, []>(`SELECT ${MEMORY_COUNT_SQL} AS n`);
  return () => {
    const now = performance.now();
    if (now - at > MEMORY_COUNT_REFRESH_MS) {
      n = count.get()!.n;
      at = now;
    }
    return n;
  };
}

export function sqliteSearch(h: SqliteHandle): SearchStore {
  const sh = sharedOf(h);
  const db = h.sqlite;
  const df = (term: string, cap: number) => sh.counts.of(term, cap, sh.index.memories);
  const together = (words: readonly string[], cap: number) => sh.counts.together(words, cap, sh.index.memories);
  const reembedCursor = () => getMeta(h, "reembed_cursor");
  // The index, once loaded, holds every memory's seq: a sample without reading the table.
  const sampleSeqs = async (n: number, upTo: number, pause?: Pause) => (loaded(sh) ? sh.index.sampleSeqs(n, upTo) : randomSeqs(db, n, upTo, pause));
  const expression = (terms: readonly string[], k: number, opts?: { every?: boolean }) =>
    opts?.every ? (terms.length ? quoteOr(terms) : null) : bm25Expression(terms, sh.index.memories, df, together, k);
  const fullText = (terms: readonly string[], project: string | null, k: number, opts?: { every?: boolean }) => {
    const expr = expression(terms, k, opts);
    return expr ? sh.bm25(expr, project, k) : [];
  };
  const sync = { nearest: (v: Float32Array, k: number, project?: string | null) => sh.index.search(v, k, project), fullText, documentFrequency: df };

  const vectorIndex: VectorIndexControl = {
    get mirror() {
      return sh.index;
    },

    start({ embedderId, log, backgroundAbove, quiet }): CoreIndexState {
      if (sh.state) sh.state.stop = true;
      // A new embedder's vectors are of another space: the old index goes with it.
      if (sh.ctx) {
        sh.index = new VectorIndex();
        sh.index.countMemories = sh.countMemories;
      }
      const ctx: IndexContext = { store: h, index: sh.index, embedderId, log, write: h.write, quiet };
      const state = startIndex(ctx, backgroundAbove);
      sh.ctx = ctx;
      sh.state = state;
      sh.index.beforeSearch = () => {
        if (state.status === "ready" && !state.stop) syncIndex(ctx, state);
      };
      return state;
    },

    async close() {
      if (!sh.state || !sh.ctx) return;
      saveIndex(sh.ctx, sh.state);
      sh.state.stop = true;
      await sh.state.saving;
    },
  };

  return {
    vectorIndex,

    async nearest(vector, k, project) {
      return sh.index.search(vector, k, project);
    },

    async nearestMany(queries, minSimilarity) {
      return sh.index.searchMany(
        queries.map((q) => ({ vector: q.vector, k: q.k, group: q.project })),
        minSimilarity,
      );
    },

    async fullText(terms, project, k, opts) {
      // Planned here (word counts are cached on this connection) and posted to
      // the reader's thread, when there is one, before the first await: the
      // caller's vector scan runs meanwhile (fts-reader.ts). A transaction's
      // reads stay on its connection, which sees its writes.
      const expr = expression(terms, k, opts);
      if (!expr) return [];
      const inWorker = h.inTransaction ? null : h.ftsReader?.query(expr, project, k);
      if (!inWorker) return sh.bm25(expr, project, k);
      // The reader rejects only when it cannot answer (gone, or the query failed there): run it here.
      return inWorker.catch(() => sh.bm25(expr, project, k));
    },

    async documentFrequency(term, cap) {
      return df(term, cap);
    },

    async scoringRows(seqs, chars) {
      return db
        .query<ScoringRow, [number, string]>(
          "SELECT seq, id, project, strength, refreshed_at AS refreshedAt, substr(content, 1, ?) AS text FROM memories WHERE seq IN (SELECT value FROM json_each(?))",
        )
        .all(chars, JSON.stringify(seqs));
    },

    async neighbours(seeds, chars) {
      const list = JSON.stringify(seeds);
      const rows = db
        .query<{ seed: number; weight: number } & ScoringRow, [number, string, number, string]>(
          `SELECT s.seq AS seed, l.weight AS weight, m.seq, m.id, m.project, m.strength, m.refreshed_at AS refreshedAt, substr(m.content, 1, ?) AS text
             FROM memories s JOIN links l ON l.from_id = s.id JOIN memories m ON m.id = l.to_id
            WHERE s.seq IN (SELECT value FROM json_each(?))
           UNION ALL
           SELECT s.seq AS seed, l.weight AS weight, m.seq, m.id, m.project, m.strength, m.refreshed_at AS refreshedAt, substr(m.content, 1, ?) AS text
             FROM memories s JOIN links l ON l.to_id = s.id JOIN memories m ON m.id = l.from_id
            WHERE s.seq IN (SELECT value FROM json_each(?))`,
        )
        .all(chars, list, chars, list);
      return rows.map(({ seed, weight, ...other }) => ({ seed, weight, other }));
    },

    async recent(p) {
      return recentRows(db, p);
    },

    async calibration(embedderId) {
      return db.query<{ memories: number; stats: string }, [string]>("SELECT memories, stats FROM embedder_calibration WHERE embedder_id = ?").get(embedderId);
    },

    async saveCalibration(r) {
      await h.write(() =>
        db.run(
          `INSERT INTO embedder_calibration(embedder_id, memories, computed_at, stats) VALUES (?1, ?2, ?3, ?4)
           ON CONFLICT(embedder_id) DO UPDATE SET memories = excluded.memories, computed_at = excluded.computed_at, stats = excluded.stats`,
          [r.embedderId, r.memories, r.computedAt, r.stats],
        ),
      );
    },

    async sampleVectors(n, pause) {
      const cursor = reembedCursor();
      const upTo = cursor === null ? Number.MAX_SAFE_INTEGER : Number(cursor);
      return vectorsOf(db, await sampleSeqs(n, upTo, pause), pause);
    },

    async reembedPending() {
      return reembedCursor() !== null;
    },

    async sampleContents(n, chars, pause) {
      return contentsOf(db, await sampleSeqs(n, Number.MAX_SAFE_INTEGER, pause), chars, pause);
    },

    sync,
  };
}
