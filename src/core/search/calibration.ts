import type { Services } from "../services";
import { slicer } from "../slices";
import {
  CALIBRATION_MIN_MEMORIES,
  CALIBRATION_NEAREST_SAMPLE,
  CALIBRATION_POSITIONS,
  CALIBRATION_RANDOM_SAMPLE,
  CALIBRATION_REGROW_FACTOR,
  THRESHOLD_DEFAULTS,
  type ThresholdName,
} from "./calibration-tuning";
import { BACKGROUND_SLICE_MS } from "../tuning";
import { counted } from "../text";

/**
 * Embedder-dependent thresholds from the store's own similarity spread.
 *
 * Cosine values mean different things in different vector spaces (bge puts
 * unrelated texts near 0.45, the hashing fallback near 0), and the weights of
 * a user's model cannot be tuned here. So every similarity threshold is kept
 * as a *position* on a scale of four anchors measured on the store itself —
 * the median and 99th percentile of random memory pairs, the median
 * similarity of a memory to its nearest neighbour, and 1 — and mapped into
 * whatever space the active embedder has (piecewise linear between anchors).
 * The positions were read off the fallback's defaults on LoCoMo-dev (see
 * calibration-tuning.ts), so a calibrated fallback reproduces its tuned constants and a
 * new model gets the same relative strictness.
 */

export type Thresholds = Record<ThresholdName, number> & { source: "calibrated" | "default"; embedderId: string };

export interface CalibrationStats {
  random: { p50: number; p90: number; p99: number };
  nearest: { p10: number; p50: number; p90: number };
  pairs: number;
  samples: number;
}

/** The anchors of the scale: increasing, or the calibration is unusable. */
export function anchorsOf(c: CalibrationStats): number[] | null {
  const a = [c.random.p50, c.random.p99, c.nearest.p50, 1];
  for (let i = 1; i < a.length; i++) if (!(a[i] > a[i - 1] + 1e-3)) return null;
  return a;
}

/** A position (0 = random median, 1 = random p99, 2 = nearest median, 3 = identical) as a cosine. */
export function cosineAt(anchors: readonly number[], position: number): number {
  const i = Math.min(anchors.length - 2, Math.max(0, Math.floor(position)));
  return anchors[i] + (position - i) * (anchors[i + 1] - anchors[i]);
}

export function thresholdsFrom(kind: "onnx" | "fallback", embedderId: string, stats: CalibrationStats | null): Thresholds {
  const anchors = stats ? anchorsOf(stats) : null;
  if (!anchors) return { ...THRESHOLD_DEFAULTS[kind], source: "default", embedderId };
  const out = { source: "calibrated", embedderId } as Thresholds;
  for (const name of Object.keys(CALIBRATION_POSITIONS) as ThresholdName[]) {
    out[name] = Math.round(Math.min(0.995, cosineAt(anchors, CALIBRATION_POSITIONS[name])) * 1000) / 1000;
  }
  return out;
}

async function storedStats(s: Services): Promise<{ memories: number; stats: CalibrationStats } | null> {
  const row = await s.storage.search.calibration(s.embedder.id);
  if (!row) return null;
  try {
    return { memories: row.memories, stats: JSON.parse(row.stats) as CalibrationStats };
  } catch {
    return null;
  }
}

/**
 * The thresholds in force, read from storage (once per embedder): from the
 * active embedder's calibration on this store, else the documented defaults
 * of its kind. Services start it, so the synchronous `thresholds` finds it.
 */
export function loadThresholds(view: Services): Promise<Thresholds> {
  // Read through the root's own storage: a transaction view's may have ended by the time the read runs.
  const state = view.state;
  const s = state.root;
  const hit = state.thresholds;
  if (hit && hit.embedderId === s.embedder.id) return Promise.resolve(hit);
  const pending = state.thresholdsLoading;
  if (pending && pending.embedderId === s.embedder.id) return pending.done;
  const embedder = s.embedder;
  const done = storedStats(s).then(
    (stored) => {
      const t = thresholdsFrom(embedder.kind, embedder.id, stored?.stats ?? null);
      if (s.embedder === embedder) state.thresholds = t;
      return t;
    },
    (e) => {
      // A read failure (closed store) keeps the defaults for now; the next call reads again.
      if (state.thresholdsLoading?.done === done) state.thresholdsLoading = null;
      s.log("warn", `could not read the similarity calibration: ${(e as Error).message}; using the defaults`);
      return thresholdsFrom(embedder.kind, embedder.id, null);
    },
  );
  state.thresholdsLoading = { embedderId: embedder.id, done };
  return done;
}

/**
 * The thresholds in force, cached in memory: the hot path reads a field,
 * never the database. Until the first read of the store's calibration
 * completes (microseconds after start on SQLite), the kind's defaults.
 */
export function thresholds(s: Services): Thresholds {
  const hit = s.state.thresholds;
  if (hit && hit.embedderId === s.embedder.id) return hit;
  void loadThresholds(s);
  return thresholdsFrom(s.embedder.kind, s.embedder.id, null);
}

const quantile = (sorted: Float64Array, q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))];

function dot(a: Float32Array, b: Float32Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += a[i] * b[i];
  return d;
}

/**
 * Measures the store: cosines of random pairs among a sample of stored
 * vectors, and each sampled memory's similarity to its nearest other memory
 * (the in-memory index, so the same approximation search uses). Yields
 * in slices (slices.ts): it runs beside live traffic.
 */
export async function measure(s: Services, signal?: AbortSignal): Promise<CalibrationStats | null> {
  const pause = slicer(BACKGROUND_SLICE_MS, s.traffic);
  const rows = await s.storage.search.sampleVectors(CALIBRATION_RANDOM_SAMPLE, pause);
  if (signal?.aborted) return null;
  if (rows.length < Math.min(CALIBRATION_MIN_MEMORIES, CALIBRATION_RANDOM_SAMPLE)) return null;
  const vectors = rows.map((r) => r.vector);
  const pairs: number[] = [];
  for (let i = 0; i < vectors.length; i++) {
    for (let j = i + 1; j < vectors.length; j++) pairs.push(dot(vectors[i], vectors[j]));
    await pause();
    if (signal?.aborted) return null;
  }
  const nearest: number[] = [];
  for (let i = 0; i < Math.min(CALIBRATION_NEAREST_SAMPLE, rows.length); i++) {
    // Exact duplicates say nothing about the spread of distinct memories.
    const hit = (await s.storage.search.nearest(vectors[i], 4)).find((h) => h.seq !== rows[i].seq && h.similarity < 0.999);
    if (hit) nearest.push(hit.similarity);
    await pause();
    if (signal?.aborted) return null;
  }
  if (nearest.length === 0) return null;
  const rs = Float64Array.from(pairs).sort();
  const ns = Float64Array.from(nearest).sort();
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  return {
    random: { p50: r3(quantile(rs, 0.5)), p90: r3(quantile(rs, 0.9)), p99: r3(quantile(rs, 0.99)) },
    nearest: { p10: r3(quantile(ns, 0.1)), p50: r3(quantile(ns, 0.5)), p90: r3(quantile(ns, 0.9)) },
    pairs: pairs.length,
    samples: nearest.length,
  };
}

/** Whether the active embedder needs (re)measuring: never measured, or the store grew well past its measure. */
export async function calibrationDue(s: Services): Promise<boolean> {
  if (await s.storage.search.reembedPending()) return false;
  const count = s.index.size;
  if (count < CALIBRATION_MIN_MEMORIES) return false;
  const stored = await storedStats(s);
  return stored === null || count >= stored.memories * CALIBRATION_REGROW_FACTOR;
}

/**
 * Calibrates the active embedder when due (at start, after a re-embed, by
 * the nightly job); off the hot path. Returns the thresholds now in force.
 */
export async function ensureCalibration(s: Services, force = false, signal?: AbortSignal): Promise<Thresholds> {
  if (!force && !(await calibrationDue(s))) return loadThresholds(s);
  const stats = await measure(s, signal);
  // Shutdown (the store may be closing): what is in force, without reading it.
  if (signal?.aborted) return thresholds(s);
  if (!stats) return loadThresholds(s);
  const count = s.index.size;
  await s.storage.search.saveCalibration({ embedderId: s.embedder.id, memories: count, computedAt: s.now(), stats: JSON.stringify(stats) });
  s.state.thresholds = null;
  s.state.thresholdsLoading = null;
  const t = await loadThresholds(s);
  if (t.source === "calibrated")
    s.log(
      "info",
      `calibrated ${s.embedder.id} on ${counted(count, "memory", "memories")}: random pairs p50 ${stats.random.p50} p99 ${stats.random.p99}, nearest p50 ${stats.nearest.p50}`,
    );
  else s.log("warn", `calibration of ${s.embedder.id} gave no usable spread; keeping the ${s.embedder.kind} defaults`);
  return t;
}
