/**
 * Recall@10 against exact float32 and latency of the vector index per query
 * distribution (issue 38), for one or two index builds side by side in one
 * process: the same vectors, the same queries, the searches of the two
 * interleaved (order alternating) so a loaded machine's noise falls on both.
 *
 * The memories are the corpus's notes; the queries are texts the notes never
 * contain: the bench's questions, short prompts as a user types them (5-20
 * words), long memory-like texts (new notes, ingest's link search), single
 * identifiers. Each is searched unfiltered and within a project. Sparse: the
 * offline embedder's vectors; dense: the same under a fixed random rotation
 * (every cosine unchanged, every value non-zero), standing in for a model's
 * (no model is available offline here).
 */
import { hashEmbed } from "../../src/embed/fallback";
import { NoteGenerator, type Query } from "./corpus";
import { round, summarize } from "./stats";
import { rotation } from "./vectors";

const DIMS = 384;

interface SearchIndex {
  upsert(seq: number, v: Float32Array, group: string | null): void;
  search(q: Float32Array, k: number, group?: string | null): { seq: number }[];
  /** Work counters (the exact index of issue 38 on): rows rescored with their float vector. */
  stats?: { searches: number; scanned: number; rescored: number; rescans: number };
}
export type IndexCtor = new () => SearchIndex;

const DISTRIBUTIONS: Record<string, (g: NoteGenerator) => Query> = {
  bench: (g) => g.query(),
  prompt: (g) => g.prompt(),
  long: (g) => g.longQuery(),
  identifier: (g) => g.identifier(),
};

function exactTop(vectors: Float32Array, rows: Int32Array | null, n: number, q: Float32Array, k: number): number[] {
  const best: { i: number; s: number }[] = [];
  const count = rows ? rows.length : n;
  for (let j = 0; j < count; j++) {
    const i = rows ? rows[j] : j;
    const o = i * DIMS;
    let d = 0;
    for (let x = 0; x < DIMS; x++) d += vectors[o + x] * q[x];
    if (best.length < k || d > best[k - 1].s) {
      if (best.length === k) best.pop();
      let at = best.length;
      while (at > 0 && best[at - 1].s < d) at--;
      best.splice(at, 0, { i, s: d });
    }
  }
  return best.map((b) => b.i + 1);
}

export interface Figure {
  recall_at_10: number;
  /** Queries that miss at least one of the exact top 10. */
  queries_missing: number;
  p50_ms: number;
  p95_ms: number;
  /** Process CPU (user + system) per search, mean. */
  cpu_ms_per_search: number;
  /** Rows scored in int8 and rows rescored with their float vector, per search (indexes that count them). */
  scanned_per_search?: number;
  rescored_per_search?: number;
  /** Searches whose first candidates could not prove the top 10 (the bound sent them back to the rows). */
  rescan_share?: number;
}

/** Per distribution, unfiltered and within a project: each index's figures. */
export function distributionFigures(
  n: number,
  perDistribution: number,
  dense: boolean,
  indexes: Record<string, IndexCtor>,
): Record<string, Record<string, Record<string, Figure>>> {
  const gen = new NoteGenerator(42);
  const rotate = dense ? rotation(99) : (v: Float32Array) => v;
  const built = Object.entries(indexes).map(([name, Ctor]) => ({ name, index: new Ctor() }));
  const vectors = new Float32Array(n * DIMS);
  const groupOf: string[] = [];
  for (let i = 0; i < n; i++) {
    const note = gen.note();
    const v = rotate(hashEmbed(note.content));
    vectors.set(v, i * DIMS);
    groupOf.push(note.project);
    for (const b of built) b.index.upsert(i + 1, v, note.project);
  }
  const rowsOf = new Map<string, number[]>();
  groupOf.forEach((g, i) => {
    (rowsOf.get(g) ?? rowsOf.set(g, []).get(g)!).push(i);
  });
  const projectPick = new NoteGenerator(11);
  const out: Record<string, Record<string, Record<string, Figure>>> = {};
  for (const [dist, make] of Object.entries(DISTRIBUTIONS)) {
    const qgen = new NoteGenerator(1000 + dist.length * 31 + dist.charCodeAt(0));
    const queries = Array.from({ length: perDistribution }, () => {
      const q = make(qgen);
      return { qv: rotate(hashEmbed(q.query)), project: q.project ?? projectPick.project() };
    });
    out[dist] = {};
    for (const filtered of [false, true]) {
      const times = built.map(() => [] as number[]);
      // CPU time of this thread per search (getrusage is exact here): steadier than wall time on a shared machine.
      const cpu = built.map(() => 0);
      for (const b of built) if (b.index.stats) b.index.stats = { searches: 0, scanned: 0, rescored: 0, rescans: 0 };
      // Two passes, the order of the indexes alternating per query: paired, on a shared machine.
      for (let rep = 0; rep < 2; rep++) {
        queries.forEach(({ qv, project }, qi) => {
          const order = (qi + rep) % 2 === 0 ? built.map((_, i) => i) : built.map((_, i) => built.length - 1 - i);
          for (const i of order) {
            const c = process.cpuUsage();
            const t = performance.now();
            built[i].index.search(qv, 10, filtered ? project : null);
            times[i].push(performance.now() - t);
            const used = process.cpuUsage(c);
            cpu[i] += (used.user + used.system) / 1000;
          }
        });
      }
      const work = built.map((b) => (b.index.stats ? { ...b.index.stats } : null));
      const hits = built.map(() => 0);
      const missing = built.map(() => 0);
      for (const { qv, project } of queries) {
        const rows = filtered ? Int32Array.from(rowsOf.get(project) ?? []) : null;
        const truth = new Set(exactTop(vectors, rows, n, qv, 10));
        built.forEach((b, i) => {
          const found = b.index.search(qv, 10, filtered ? project : null).filter((h) => truth.has(h.seq)).length;
          hits[i] += found / Math.max(1, truth.size);
          if (found < truth.size) missing[i]++;
        });
      }
      const figures: Record<string, Figure> = {};
      built.forEach((b, i) => {
        const s = summarize(times[i]);
        figures[b.name] = {
          recall_at_10: round(hits[i] / queries.length, 3),
          queries_missing: missing[i],
          p50_ms: s.p50,
          p95_ms: s.p95,
          cpu_ms_per_search: round(cpu[i] / times[i].length, 3),
        };
        const w = work[i];
        if (w && w.searches > 0) {
          figures[b.name].scanned_per_search = Math.round(w.scanned / w.searches);
          figures[b.name].rescored_per_search = round(w.rescored / w.searches, 1);
          figures[b.name].rescan_share = round(w.rescans / w.searches, 3);
        }
      });
      out[dist][filtered ? "project" : "unfiltered"] = figures;
    }
  }
  return out;
}

/**
 * The resident memory one index of `n` of the bench's vectors adds to a process (MB): run in a
 * fresh process per index (bench/vectors.ts --rss), after a full collection, so the figure is the
 * index's arrays and WebAssembly memory, not the other index's or the vectors'.
 */
export function indexRss(n: number, dense: boolean, Ctor: IndexCtor): { rss_before_mb: number; rss_after_mb: number; index_mb: number } {
  const gen = new NoteGenerator(42);
  const rotate = dense ? rotation(99) : (v: Float32Array) => v;
  Bun.gc(true);
  const before = process.memoryUsage().rss;
  const index = new Ctor();
  for (let i = 0; i < n; i++) {
    const note = gen.note();
    index.upsert(i + 1, rotate(hashEmbed(note.content)), note.project);
  }
  index.search(rotate(hashEmbed("warm the kernels")), 10, null);
  Bun.gc(true);
  const after = process.memoryUsage().rss;
  const mb = (b: number) => round(b / 2 ** 20, 1);
  return { rss_before_mb: mb(before), rss_after_mb: mb(after), index_mb: mb(after - before) };
}
