import type { Services } from "../services";
import { keywords } from "../text";
import {
  WARM_MAX_WORDS,
  WARM_MIN_SHARE,
  WARM_SAMPLE_CHARS,
  WARM_SAMPLE_MEMORIES,
  WARM_SEARCH_PROJECT_SHARE,
  WARM_SEARCH_SAMPLE_CHARS,
  WARM_SEARCHES,
} from "./tuning";
import { search } from "./search";
import { BACKGROUND_SLICE_MS } from "../tuning";
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
 * Runs WARM_SEARCHES whole searches, off the request path, and throws their
 * answers away. A fresh process runs a search's code (the vector scan's
 * WebAssembly kernels and loops, words, query vector, fusion, the graph hop,
 * scoring, the result views) in JavaScriptCore's lower tiers until it has
 * seen it often enough to optimise it, and the compiler threads that do so
 * take a CPU from the request, the full-text reader or the client on a small
 * machine: a fresh server's first few hundred searches were its slow ones
 * (tuning.ts). It replaces a warm-up of random-vector scans, which optimised
 * the scan alone. The queries are runs of words from random memories (a
 * share of them within a project), searched as a client would, without a
 * receipt: nothing is written, and the word counts they take are the ones a
 * search would take (results do not change). SQLite only: on PostgreSQL
 * these would be database queries. Runs once the index is ready, in slices
 * that yield to requests; stops when `signal` aborts. Returns the searches run.
 */
export async function warmSearches(s: Services, signal?: AbortSignal): Promise<number> {
  await readyOrAborted(s, signal);
  if (signal?.aborted || s.storage.engine !== "sqlite" || s.index.size === 0) return 0;
  const pause = slicer(BACKGROUND_SLICE_MS, s.traffic);
  const texts = (await s.storage.search.sampleContents(WARM_SEARCHES, WARM_SEARCH_SAMPLE_CHARS, pause)).map((t) => keywords(t)).filter((w) => w.length > 0);
  if (signal?.aborted || texts.length === 0) return 0;
  const projects = [...new Set((await s.storage.search.recent({ now: s.now(), project: null, limit: 50 })).map((r) => r.project ?? ""))].filter((p) => p);
  // A fixed sequence (Park-Miller): the same work at every start.
  let seed = 20261128;
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  let done = 0;
  for (; done < WARM_SEARCHES && !signal?.aborted; done++) {
    const words = texts[done % texts.length];
    // 2 to 6 words, as the bench's and agents' short queries.
    const n = 2 + Math.floor(random() * 5);
    const from = Math.floor(random() * Math.max(1, words.length - n));
    const project = projects.length > 0 && random() < WARM_SEARCH_PROJECT_SHARE ? projects[Math.floor(random() * projects.length)] : undefined;
    await search(s, { query: words.slice(from, from + n).join(" "), ...(project ? { project } : {}) });
    await pause();
  }
  return done;
}
