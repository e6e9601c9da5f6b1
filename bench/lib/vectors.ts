/**
 * Vector recall and latency of the in-memory index against exact float32
 * cosine, in-process: the offline embedder's (sparse) vectors of a realistic
 * corpus, and the same vectors under a fixed random rotation (dense like a
 * real model's, every cosine unchanged).
 */
import { VectorIndex as NewIndex } from "../../src/store/sqlite/vector";
const VectorIndex: typeof NewIndex = process.env.BENCH_OLD_INDEX ? (await import(process.env.BENCH_OLD_INDEX)).VectorIndex : NewIndex;
import { hashEmbed } from "../../src/embed/fallback";
import { NoteGenerator, prng } from "./corpus";
import { round, summarize } from "./stats";

const DIMS = 384;
const BLOCK = 128;

/** Orthonormal Walsh-Hadamard transform of one 128-wide block, in place. */
function hadamard(v: Float32Array, at: number): void {
  for (let h = 1; h < BLOCK; h *= 2) {
    for (let i = at; i < at + BLOCK; i += 2 * h) {
      for (let j = i; j < i + h; j++) {
        const a = v[j];
        const b = v[j + h];
        v[j] = a + b;
        v[j + h] = a - b;
      }
    }
  }
  const norm = 1 / Math.sqrt(BLOCK);
  for (let i = at; i < at + BLOCK; i++) v[i] *= norm;
}

/**
 * A fixed random rotation of R^384: three rounds of (random signs, random
 * permutation, block Hadamard). Each round is orthogonal, so cosines are
 * unchanged; after three rounds every output mixes every input.
 */
export function rotation(seed: number): (v: Float32Array) => Float32Array {
  const r = prng(seed);
  const rounds = Array.from({ length: 3 }, () => {
    const signs = Float32Array.from({ length: DIMS }, () => (r() < 0.5 ? -1 : 1));
    const perm = Array.from({ length: DIMS }, (_, i) => i);
    for (let i = DIMS - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [perm[i], perm[j]] = [perm[j], perm[i]];
    }
    return { signs, perm: Int32Array.from(perm) };
  });
  return (v) => {
    let cur = Float32Array.from(v);
    for (const { signs, perm } of rounds) {
      const next = new Float32Array(DIMS);
      for (let i = 0; i < DIMS; i++) next[perm[i]] = cur[i] * signs[i];
      for (let b = 0; b < DIMS; b += BLOCK) hadamard(next, b);
      cur = next;
    }
    return cur;
  };
}

function exactTop(vectors: Float32Array[], groups: (string | null)[], q: Float32Array, k: number, group: string | null): number[] {
  const best: { i: number; s: number }[] = [];
  for (let i = 0; i < vectors.length; i++) {
    if (group !== null && groups[i] !== group) continue;
    const v = vectors[i];
    let d = 0;
    for (let j = 0; j < DIMS; j++) d += v[j] * q[j];
    if (best.length < k) {
      best.push({ i, s: d });
      best.sort((a, b) => b.s - a.s);
    } else if (d > best[k - 1].s) {
      best[k - 1] = { i, s: d };
      best.sort((a, b) => b.s - a.s);
    }
  }
  return best.map((b) => b.i + 1);
}

export interface VectorFigures {
  vectors: number;
  queries: number;
  recall_at_10: number;
  recall_at_10_project: number;
  search_ms: ReturnType<typeof summarize>;
  search_project_ms: ReturnType<typeof summarize>;
  /** CPU time (process.cpuUsage) per search over the latency pass: steadier than wall time on a loaded machine. */
  search_cpu_ms: number;
  search_project_cpu_ms: number;
  /** Ingest's link search: a new memory's 3 nearest in its own project (recall@3 against exact, CPU per search). */
  link_recall_at_3: number;
  link_search_cpu_ms: number;
}

/** Recall@10 against float32 brute force and search latency, for `n` corpus vectors. */
export function vectorFigures(n: number, queryCount = 100, dense = false): VectorFigures {
  const gen = new NoteGenerator(42);
  const qgen = new NoteGenerator(7);
  const rotate = dense ? rotation(99) : (v: Float32Array) => v;
  const index = new VectorIndex();
  const vectors: Float32Array[] = [];
  const groups: (string | null)[] = [];
  for (let i = 0; i < n; i++) {
    const note = gen.note();
    const v = rotate(hashEmbed(note.content));
    vectors.push(v);
    groups.push(note.project);
    index.upsert(i + 1, v, note.project);
  }
  const queries = Array.from({ length: queryCount }, () => qgen.query());
  let hit = 0;
  let hitProject = 0;
  const times: number[] = [];
  const projectTimes: number[] = [];
  const prepared = queries.map((q) => ({ qv: rotate(hashEmbed(q.query)), project: q.project ?? groups[Math.floor(prng(q.query.length)() * n)] }));
  // Latency first, in a pass of its own: the brute force below evicts the index from the caches.
  let cpu = 0;
  let cpuProject = 0;
  const cpuNow = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  for (let rep = 0; rep < 2; rep++) {
    for (const { qv, project } of prepared) {
      let c = cpuNow();
      let t = performance.now();
      index.search(qv, 10);
      times.push(performance.now() - t);
      cpu += cpuNow() - c;
      c = cpuNow();
      t = performance.now();
      index.search(qv, 10, project);
      projectTimes.push(performance.now() - t);
      cpuProject += cpuNow() - c;
    }
  }
  for (const { qv, project } of prepared) {
    const got = index.search(qv, 10).map((h) => h.seq);
    const gotProject = index.search(qv, 10, project).map((h) => h.seq);
    const truth = new Set(exactTop(vectors, groups, qv, 10, null));
    hit += got.filter((s) => truth.has(s)).length / Math.max(1, truth.size);
    const truthProject = new Set(exactTop(vectors, groups, qv, 10, project));
    hitProject += gotProject.filter((s) => truthProject.has(s)).length / Math.max(1, truthProject.size);
  }
  // New memories as queries, each within its own project, k = 3: what ingest's similarity links ask.
  const dgen = new NoteGenerator(1001);
  const docs = Array.from({ length: queryCount }, () => {
    const note = dgen.note();
    return { qv: rotate(hashEmbed(note.content)), project: note.project };
  });
  let linkHit = 0;
  let linkCpu = 0;
  for (let rep = 0; rep < 3; rep++) {
    const c = cpuNow();
    for (const { qv, project } of docs) index.search(qv, 3, project);
    if (rep > 0) linkCpu += cpuNow() - c;
  }
  for (const { qv, project } of docs) {
    const got = index.search(qv, 3, project).map((h) => h.seq);
    const truth = new Set(exactTop(vectors, groups, qv, 3, project));
    linkHit += got.filter((s) => truth.has(s)).length / Math.max(1, truth.size);
  }
  return {
    vectors: n,
    queries: queryCount,
    link_recall_at_3: round(linkHit / queryCount, 3),
    link_search_cpu_ms: round(linkCpu / (2 * docs.length), 3),
    recall_at_10: round(hit / queryCount, 3),
    recall_at_10_project: round(hitProject / queryCount, 3),
    search_ms: summarize(times),
    search_project_ms: summarize(projectTimes),
    search_cpu_ms: round(cpu / times.length, 3),
    search_project_cpu_ms: round(cpuProject / projectTimes.length, 3),
  };
}
