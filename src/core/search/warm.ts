import type { Services } from "../services";
import { keywords } from "../text";
import { WARM_MAX_WORDS, WARM_MIN_SHARE, WARM_SAMPLE_CHARS, WARM_SAMPLE_MEMORIES, SEARCH_CANDIDATES, WARM_VECTOR_SEARCHES } from "./tuning";
import { BACKGROUND_SLICE_MS } from "../tuning";
import { DIMENSIONS } from "../../embed/types";
import { slicer } from "../slices";
import { planCap } from "./full-text";

export interface WarmResult {
  /** Memories sampled. */
  sampled: number;
  /** Words counted (each now answered from the engine's cache). */
  words: number;
  /** Wall-clock milliseconds from the first count to the last. */
  ms: number;
}

/**
 * Counts, off the request path, the words a search will most likely need
 * counted: the commonest words of a random sample of memories. Search's word
 * weights and full-text plan read each query word's count (up to half the
 * store, cached per word); counting is the one part of a search that costs
 * more the first time a word is seen, and more the commoner the word, so a
 * fresh server's first searches were the slow ones. The counts are the same
 * ones a search would take (same cap, same cache): results do not change.
 * Runs once the vector index is ready (the memory count is exact then), in
 * slices that yield to requests; stops when `signal` aborts.
 */
/** Until the vector index is ready or `signal` aborts. Shutdown aborts before it closes the store, whose index may still be loading (ready would never come). */
function readyOrAborted(s: Services, signal?: AbortSignal): Promise<unknown> {
  const abort = new Promise<void>((resolve) => (signal?.aborted ? resolve() : signal?.addEventListener("abort", () => resolve(), { once: true })));
  return Promise.race([s.indexState.ready, abort]);
}

export async function warmWordCounts(s: Services, signal?: AbortSignal): Promise<WarmResult> {
  await readyOrAborted(s, signal);
  const total = s.index.memories;
  if (signal?.aborted || total === 0) return { sampled: 0, words: 0, ms: 0 };
  const pause = slicer(BACKGROUND_SLICE_MS, s.traffic);
  const texts = await s.storage.search.sampleContents(WARM_SAMPLE_MEMORIES, WARM_SAMPLE_CHARS, pause);
  if (signal?.aborted) return { sampled: 0, words: 0, ms: 0 };
  const seen = new Map<string, number>();
  // ~30 ms for 2000 texts at 2000 characters: in slices too.
  for (const text of texts) {
    for (const w of new Set(keywords(text))) seen.set(w, (seen.get(w) ?? 0) + 1);
    await pause();
  }
  const least = Math.max(1, Math.ceil(WARM_MIN_SHARE * texts.length));
  const words = [...seen]
    .filter(([, n]) => n >= least)
    .sort((a, b) => b[1] - a[1])
    .slice(0, WARM_MAX_WORDS)
    .map(([w]) => w);
  // The cap search's word weights and full-text plan count with (queryTerms, planCap).
  const cap = planCap(total);
  const started = performance.now();
  let counted = 0;
  for (const w of words) {
    if (signal?.aborted) break;
    await s.storage.search.documentFrequency(w, cap);
    counted++;
    await pause();
  }
  return { sampled: texts.length, words: counted, ms: Math.round(performance.now() - started) };
}

/**
 * Runs WARM_VECTOR_SEARCHES nearest searches of random unit vectors over the
 * whole index, off the request path, and throws their answers away. A fresh
 * process runs the vector scan's WebAssembly kernels and JavaScript loops in
 * JavaScriptCore's baseline tiers until it has seen them often enough to
 * optimise them, and on a busy machine the optimising compiler's threads wait
 * for a CPU: a fresh server's first few hundred searches were its slow ones
 * (tuning.ts). SQLite's in-memory index only: on PostgreSQL these would be
 * database queries. Runs once the index is ready, in slices that yield to
 * requests; stops when `signal` aborts. Returns the searches run.
 */
export async function warmVectorScan(s: Services, signal?: AbortSignal): Promise<number> {
  await readyOrAborted(s, signal);
  if (signal?.aborted || s.storage.engine !== "sqlite" || s.index.size === 0) return 0;
  const pause = slicer(BACKGROUND_SLICE_MS, s.traffic);
  // A fixed sequence (Park-Miller): the same work at every start.
  let seed = 20261127;
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const v = new Float32Array(DIMENSIONS);
  let done = 0;
  for (; done < WARM_VECTOR_SEARCHES && !signal?.aborted; done++) {
    let norm = 0;
    for (let i = 0; i < DIMENSIONS; i++) norm += (v[i] = random() - 0.5) ** 2;
    for (let i = 0; i < DIMENSIONS; i++) v[i] /= Math.sqrt(norm);
    await s.storage.search.nearest(v, SEARCH_CANDIDATES, null);
    await pause();
  }
  return done;
}
