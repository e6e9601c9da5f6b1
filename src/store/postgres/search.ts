import type { SQL } from "bun";
import type { Logger } from "../../core/log";
import { conjunctionCandidates, planCap, planTerms, TermCountCache } from "../../core/search/full-text";
import { touchedBound } from "../../core/search/recent";
import type { IndexState, RankedRow, ScoringRow, SearchStore, VectorIndexControl, VectorMirror } from "../../core/search/store";
import { BM25_MAX_SCORED_ROWS, RECENT_CONNECTION_WEIGHT, RECENT_RECENCY_DAYS, RECENT_RECENCY_WEIGHT, RECENT_STRENGTH_WEIGHT } from "../../core/search/tuning";
import { DECAY_FLOOR, DECAY_HALF_LIFE_DAYS } from "../../core/memories/tuning";
import { nearestStatement, sqlString, type NearestOptions } from "./nearest";
import { PG_VECTOR_COUNT_REFRESH_MS, RECENT_FIRST_ROWS } from "./tuning";
import type { PgHandle } from "./open";

/**
 * search/ on PostgreSQL. Vector search is pgvector's HNSW index (cosine,
 * `<=>`) on memory_vec, queried per search: every server over the database
 * sees every write at once, so there is no in-process copy to keep in step
 * (the SQLite engine's index, its change log and index file have no
 * counterpart here). Full text is the weighted tsvector `memories.fts`
 * (GIN) ranked by ts_rank, the project filter inside the same query.
 * ts_rank, not ts_rank_cd: cover density costs ~3-6 µs more a matching row
 * (a search ranks up to thousands: half the full-text statement's time at
 * 100k), and LoCoMo's hybrid recall on this engine is the same with either
 * (R@5 0.557 / R@10 0.624 against 0.556 / 0.624; the core re-scores the
 * candidates anyway). See docs/decisions/postgres-performance.md.
 * Raw SQL throughout: tsvector ranking and pgvector operators are what
 * drizzle cannot say, and the few plain reads beside them share their shape.
 */

/** What this store needs of the handle (src/store/postgres/open.ts). */
interface PgSearchHandle {
  readonly sql: SQL;
  readonly schema: string;
  readonly inTransaction?: boolean;
  ready(): Promise<void>;
}

const DAY_MS = 86_400_000;

/**
 * A tsquery of words OR-ed, each quoted as a lexeme (a quote inside
 * doubled, a backslash escaped), so no text forms tsquery syntax; to_tsquery('english', ...) stems
 * them as the fts column was.
 */
const tsWord = (t: string) => `'${t.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
const tsOr = (terms: readonly string[]) => terms.map(tsWord).join(" | ");
const tsAnd = (terms: readonly string[]) => terms.map(tsWord).join(" & ");

/** Importance of /recent as SQL, the same formula as src/store/sqlite/search-recent.ts ($1 = now). */
const IMPORTANCE = `(${RECENT_STRENGTH_WEIGHT} * (m.strength * (${DECAY_FLOOR} + ${1 - DECAY_FLOOR} * power(0.5, greatest(0, $1::float8 - m.refreshed_at) / ${DAY_MS * DECAY_HALF_LIFE_DAYS}.0)))
  + ${RECENT_CONNECTION_WEIGHT} * ln(1 + m.link_count)
  + ${RECENT_RECENCY_WEIGHT} * exp(-(greatest(0, $1::float8 - m.created_at)) / ${RECENT_RECENCY_DAYS * DAY_MS}.0))`;

/** Spelled as in migration 0008's indexes, or the planner will not use them. */
const TOUCHED = "greatest(m.created_at, m.refreshed_at)";
/** Slack for PostgreSQL's and JavaScript's pow/exp/ln disagreeing in the last bits: the walk widens, never narrows, by it. */
const RECENT_SLACK = 1e-9;
/** Before every time a row can hold (ms since the epoch; ±8.64e15 is JavaScript's Date range). */
const EARLIEST = -8.64e15;

/**
 * The latest time at or before `now` such that no row touched then or
 * earlier, with strength at most `strength` and at most `links` links, can
 * reach `floor` (touchedBound only grows with time); null when even the
 * earliest can.
 */
function since(strength: number, links: number, floor: number, now: number): number | null {
  const bound = (t: number) => touchedBound(strength, links, t, now);
  let lo = EARLIEST;
  let hi = now;
  if (bound(lo) >= floor) return null;
  if (bound(hi) < floor) return hi;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (bound(mid) >= floor) hi = mid;
    else lo = mid;
  }
  return lo;
}

/** Full rows as plain data (bigint columns as numbers), camelCase. */
const ROW_COLUMNS = `m.seq::float8 AS seq, m.id, m.content, m.memory_type AS "memoryType", m.project, m.source_agent AS "sourceAgent",
  m.source_agent_id AS "sourceAgentId", m.source_domain AS "sourceDomain", m.source_session AS "sourceSession", m.privacy,
  m.created_at::float8 AS "createdAt", m.updated_at::float8 AS "updatedAt", m.refreshed_at::float8 AS "refreshedAt", m.strength,
  m.shown_count AS "shownCount", m.used_count AS "usedCount", m.last_shown_at::float8 AS "lastShownAt", m.last_used_at::float8 AS "lastUsedAt",
  m.link_count AS "linkCount"`;

/** What ranking reads of a memory (ScoringRow), `chars` of its content as `text` (bigint columns as numbers). */
const SCORING_COLUMNS = (m: string, chars: string) =>
  `${m}.seq::float8 AS seq, ${m}.id, ${m}.project, ${m}.strength, ${m}.refreshed_at::float8 AS "refreshedAt", substr(${m}.content, 1, ${chars}) AS text`;
const scoringRow = (r: ScoringRow): ScoringRow => ({
  seq: Number(r.seq),
  id: r.id,
  project: r.project,
  strength: Number(r.strength),
  refreshedAt: Number(r.refreshedAt),
  text: r.text,
});

/**
 * fullText: the rows matching $1 (a tsquery), ranked by $2's words, the top $3;
 * with `project`, of project $4 only. Exported for bench/pg-plans.ts.
 */
export const fullTextStatement = (
  S: string,
  project: boolean,
) => `SELECT m.seq::float8 AS seq FROM ${S}.memories m, to_tsquery('english', $1) qm, to_tsquery('english', $2) qr
  WHERE m.fts @@ qm ${project ? "AND m.project = $4" : ""} ORDER BY ts_rank(m.fts, qr) DESC, m.seq DESC LIMIT $3`;

/** scoringRows: $1 the seqs (bigint[]), $2 how many characters of content. Exported for bench/pg-plans.ts. */
export const scoringStatement = (S: string) => `SELECT ${SCORING_COLUMNS("m", "$2")} FROM ${S}.memories m WHERE m.seq = ANY($1::bigint[])`;

/**
 * neighbours: links of the seeds ($1, seqs) in both directions, from each
 * seed's row (its id) to the far end's scoring row ($2 characters of
 * content). The links of a seed in a lateral subquery: planned in a third
 * of the time of a UNION of two three-table joins (0.4 against 1.8 ms), for
 * the same execution. Exported for bench/pg-plans.ts.
 */
export const neighboursStatement = (S: string) => `SELECT s.seq::float8 AS seed, l.weight AS weight, ${SCORING_COLUMNS("m", "$2")}
    FROM ${S}.memories s
    CROSS JOIN LATERAL (SELECT to_id AS other, weight FROM ${S}.links WHERE from_id = s.id
                        UNION ALL SELECT from_id, weight FROM ${S}.links WHERE to_id = s.id) l
    JOIN ${S}.memories m ON m.id = l.other
   WHERE s.seq = ANY($1::bigint[])`;

export function pgSearch(handle: PgHandle, opts: NearestOptions = {}): SearchStore {
  // The engine base's handle carries the client and schema (see open.ts).
  const h = handle as unknown as PgSearchHandle;
  const S = h.schema;
  const terms = new TermCountCache();
  let vectors = 0;
  let countedAt = -Infinity;
  let counting: Promise<number> | null = null;
  /** The first count has come back: until then IDF would weigh every word against an empty store. */
  let counted = false;
  const firstCount = async () => {
    if (!counted) await countVectors().catch(() => {});
  };
  /** This server's vector writes so far: a count that a write overtook is not trusted for the refresh period. */
  let writes = 0;
  let log: Logger = () => {};

  /** Rows of memory_vec: what /health reports as index_vectors and IDF counts against. */
  const countVectors = (): Promise<number> => {
    counting ??= (async () => {
      try {
        await h.ready();
        const before = writes;
        const [row] = await h.sql.unsafe(`SELECT count(*)::float8 AS n FROM ${S}.memory_vec`);
        vectors = Number(row.n);
        counted = true;
        countedAt = writes === before ? Date.now() : -Infinity;
        return vectors;
      } finally {
        counting = null;
      }
    })();
    return counting;
  };
  const refreshCount = () => {
    if (Date.now() - countedAt > PG_VECTOR_COUNT_REFRESH_MS && !counting) countVectors().catch(() => {});
  };

  const mirror: VectorMirror = {
    get size() {
      refreshCount();
      return vectors;
    },
    // Every stored memory has its vector row: the same count.
    get memories() {
      return mirror.size;
    },
    has: () => false,
    // pgvector indexes the row the write inserted; only the count moves. It
    // moves here at once (a recall right after an ingest weighs its words
    // against the store as it now is, not against a count from before), and
    // the next read recounts to correct what this cannot know (a re-embed's
    // upsert of an existing row, another server's writes).
    upsert: () => {
      writes++;
      vectors++;
      countedAt = -Infinity;
    },
    remove: () => {
      writes++;
      vectors = Math.max(0, vectors - 1);
      countedAt = -Infinity;
    },
    regroup: () => {},
  };

  const q = async (text: string, params: unknown[] = []) => {
    await h.ready();
    return h.sql.unsafe(text, params as any[]);
  };
  const meta = async (key: string): Promise<string | null> => {
    const [row] = await q(`SELECT value FROM ${S}.meta WHERE key = $1`, [key]);
    return row ? String(row.value) : null;
  };
  /** Memories whose fts holds every one of `words`, up to `cap`, cached like the SQLite engine's (a list's key has spaces; one word is its own key). */
  const countTogether = async (words: readonly string[], cap: number): Promise<number> => {
    const key = words.join(" ");
    await firstCount();
    const known = terms.lookup(key, cap, mirror.size);
    if (known !== undefined) return known;
    // Sequential scans off for this statement alone (set_config local, in one simple-protocol message
    // as nearest.ts does; the tsquery inlined as an escaped literal): when the cap is
    // near the planner's estimate it scans the whole table (a word in 26k of 100k rows: 120 ms) where
    // the GIN index's bitmap reads only the matching rows' pages (55 ms). Inside a caller's transaction
    // the setting would outlive the statement: the planner's own choice there.
    // A word from another caller than the core's tokenizer may hold U+0000, which no inlined text can:
    // bound as a parameter it is refused as an invalid value, as everywhere else.
    const count = (match: string) =>
      `SELECT count(*)::float8 AS n FROM (SELECT 1 FROM ${S}.memories WHERE fts @@ to_tsquery('english', ${match}) LIMIT ${Math.trunc(cap)}) x`;
    let n: number;
    if (h.inTransaction || words.some((w) => w.includes("\u0000"))) [{ n }] = await q(count("$1"), [tsAnd(words)]);
    else {
      await h.ready();
      const results = (await h.sql.unsafe(`SELECT set_config('enable_seqscan', 'off', true);\n${count(sqlString(tsAnd(words)))}`).simple()) as unknown as {
        n: number;
      }[][];
      [{ n }] = results[1];
    }
    return terms.store(key, Number(n), cap);
  };
  /** Counts up to `cap` of memories whose fts holds `term`. */
  const documentFrequency = (term: string, cap: number): Promise<number> => countTogether([term], cap);

  const vectorIndex: VectorIndexControl = {
    mirror,

    start({ embedderId, log: logger }): IndexState {
      log = logger;
      let resolve!: () => void;
      // Nothing to load: pgvector answers as soon as the database does. `ready` waits for the embedder's claim and the first count.
      const claim = claimVectorSpace(embedderId);
      const state: IndexState = {
        status: "ready",
        loaded: 0,
        total: 0,
        ready: new Promise<void>((r) => (resolve = r)),
        // A failed claim is logged below; waiters go on (the store's next query reports the outage).
        claimed: claim.catch(() => {}),
      };
      void claim
        .then(countVectors)
        .then(
          (n) => {
            state.loaded = state.total = n;
          },
          (e) => log("warn", `vector search: could not read the store: ${(e as Error).message}`),
        )
        .finally(resolve);
      return state;
    },

    close() {},
  };

  return {
    vectorIndex,

    async nearest(vector, k, project) {
      if (k <= 0) return [];
      // PostgreSQL text cannot hold U+0000. Bound as a parameter it is refused (22021) as in every
      // other statement, which the engine reports as an invalid value; inlined it would cut the message.
      if (project?.includes("\u0000")) await q("SELECT $1::text", [project]);
      await h.ready();
      const results = (await h.sql.unsafe(nearestStatement(S, vector, k, project, opts)).simple()) as unknown as unknown[][];
      // relaxed_order may return near ties out of order: exact order by the distances themselves.
      return (results[1] as { seq: number; similarity: number }[])
        .map((r) => ({ seq: Number(r.seq), similarity: Number(r.similarity) }))
        .sort((a, b) => b.similarity - a.similarity || a.seq - b.seq);
    },

    async fullText(words, project, k, opts) {
      const clean = words.filter((w) => w.length > 0);
      let plan: { match: string[]; rank: string[]; together?: boolean } | null;
      if (opts?.every || clean.length === 0) plan = clean.length ? { match: clean, rank: clean } : null;
      else {
        await firstCount();
        const total = mirror.size;
        const cap = planCap(total);
        const dfs = new Map(await Promise.all(clean.map(async (t) => [t, total > 0 ? await documentFrequency(t, cap) : 0] as const)));
        const df = (t: string) => dfs.get(t) ?? 0;
        // Every word common: the lists planTerms may AND, counted first (in parallel, cached) as SQLite counts them inline.
        const lists = conjunctionCandidates(clean, total, df);
        const rows = new Map(await Promise.all(lists.map(async (w) => [w.join(" "), await countTogether(w, BM25_MAX_SCORED_ROWS + 1)] as const)));
        plan = planTerms(clean, total, df, (w) => rows.get(w.join(" ")) ?? 0, k);
      }
      if (!plan) return [];
      const match = plan.together ? tsAnd(plan.match) : tsOr(plan.match);
      const params: unknown[] = [match, plan.together ? match : tsOr(plan.rank), k];
      if (project) params.push(project);
      const rows = await q(fullTextStatement(S, Boolean(project)), params);
      return (rows as { seq: number }[]).map((r) => Number(r.seq));
    },

    documentFrequency,

    async scoringRows(seqs, chars) {
      if (seqs.length === 0) return [];
      const rows = await q(scoringStatement(S), [seqs, chars]);
      return (rows as ScoringRow[]).map(scoringRow);
    },

    async neighbours(seeds, chars) {
      if (seeds.length === 0) return [];
      const rows = await q(neighboursStatement(S), [seeds, chars]);
      return (rows as ({ seed: number; weight: number } & ScoringRow)[]).map((r) => ({ seed: Number(r.seed), weight: Number(r.weight), other: scoringRow(r) }));
    },

    async recent(p) {
      // The top seqs first, their full rows after: sorting whole rows (content
      // included) through the top-N sort cost a third more database CPU.
      const rows = await recentBounded(p);
      return (rows as RankedRow[]).map((r) => ({ ...r, importance: Number(r.importance) }));
    },

    async calibration(embedderId) {
      const [row] = await q(`SELECT memories, stats FROM ${S}.embedder_calibration WHERE embedder_id = $1`, [embedderId]);
      return row ? { memories: Number(row.memories), stats: String(row.stats) } : null;
    },

    async saveCalibration(r) {
      await q(
        `INSERT INTO ${S}.embedder_calibration(embedder_id, memories, computed_at, stats) VALUES ($1, $2, $3, $4)
         ON CONFLICT (embedder_id) DO UPDATE SET memories = excluded.memories, computed_at = excluded.computed_at, stats = excluded.stats`,
        [r.embedderId, r.memories, r.computedAt, r.stats],
      );
    },

    async sampleVectors(n) {
      const rows = await q(
        `SELECT seq::float8 AS seq, embedding::text AS e FROM ${S}.memory_vec
          WHERE seq <= coalesce((SELECT value::bigint FROM ${S}.meta WHERE key = 'reembed_cursor'), 9223372036854775807)
          ORDER BY random() LIMIT $1`,
        [n],
      );
      return (rows as { seq: number; e: string }[]).map((r) => ({ seq: Number(r.seq), vector: Float32Array.from(JSON.parse(r.e) as number[]) }));
    },

    async reembedPending() {
      return (await meta("reembed_cursor")) !== null;
    },

    async sampleContents(n, chars) {
      const rows = await q(`SELECT substr(content, 1, $2) AS text FROM ${S}.memories ORDER BY random() LIMIT $1`, [n, chars]);
      return (rows as { text: string }[]).map((r) => r.text);
    },
  };

  /**
   * /recent, exact, without scoring every row: a first floor from the newest
   * RECENT_FIRST_ROWS by touched (the later of created_at and refreshed_at),
   * the largest strength and link count (index ends), then every row touched
   * after the time before which none can reach that floor (touchedBound: both
   * time terms only fall with age) scored from memories_(project_)touched,
   * an index-only walk that carries every column importance reads (migration
   * 0008); only the winners' rows come from the heap. The bound holds for
   * any strengths and link counts; with a hub or a very strong memory it
   * reaches further back (at worst every row, still index-only).
   */
  async function recentBounded(p: { now: number; project: string | null; limit: number }): Promise<unknown[]> {
    if (p.limit <= 0) return [];
    const where = p.project === null ? "" : "WHERE m.project = $2";
    const params = p.project === null ? [p.now] : [p.now, p.project];
    const [first] = (await q(
      `SELECT (SELECT max(m.strength) FROM ${S}.memories m ${where})::float8 AS s,
              (SELECT max(m.link_count) FROM ${S}.memories m ${where})::float8 AS l,
              (SELECT importance FROM (SELECT ${IMPORTANCE} AS importance FROM ${S}.memories m ${where}
                  ORDER BY ${TOUCHED} DESC LIMIT ${Math.max(RECENT_FIRST_ROWS, p.limit)}) x ORDER BY importance DESC LIMIT 1 OFFSET ${p.limit - 1}) AS f`,
      params,
    )) as { s: number | null; l: number | null; f: number | null }[];
    // Fewer rows than the limit among the first: the store (or project) is that small, read it whole.
    const after = first.f === null ? null : since(Math.max(0, Number(first.s ?? 0)), Math.max(0, Number(first.l ?? 0)), Number(first.f) - RECENT_SLACK, p.now);
    const range = after === null ? "" : `${p.project === null ? "WHERE" : "AND"} ${TOUCHED} > ${after}`;
    return q(
      `SELECT ${ROW_COLUMNS}, t.importance FROM (
         SELECT m.seq, ${IMPORTANCE} AS importance FROM ${S}.memories m ${where} ${range}
          ORDER BY importance DESC, m.seq DESC LIMIT ${p.project === null ? "$2" : "$3"}) t
        JOIN ${S}.memories m ON m.seq = t.seq ORDER BY t.importance DESC, m.seq DESC`,
      [...params, p.limit],
    );
  }
  /**
   * Records the active embedder; stored vectors of another one are marked
   * for re-embedding. One statement per decision, so two servers starting
   * at once with the same embedder agree.
   */
  async function claimVectorSpace(embedderId: string): Promise<void> {
    const recorded = await meta("embedder_id");
    if (recorded === embedderId) return;
    const [{ n }] = await q(`SELECT count(*)::float8 AS n FROM ${S}.memories`);
    if (recorded === null || Number(n) === 0) {
      await q(`INSERT INTO ${S}.meta(key, value) VALUES ('embedder_id', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [embedderId]);
      return;
    }
    await h.sql.begin(async (tx) => {
      await tx.unsafe(`INSERT INTO ${S}.meta(key, value) VALUES ('embedder_id', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, [embedderId]);
      await tx.unsafe(`INSERT INTO ${S}.meta(key, value) VALUES ('reembed_cursor', '0') ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
    });
    log("warn", `stored vectors came from ${recorded}; re-embedding them with ${embedderId} in the background`);
  }
}
