/**
 * Embedder-dependent similarity thresholds and the calibration that places them (calibration.ts).
 */

export type ThresholdName =
  | "vectorMin"
  | "link"
  | "distillMerge"
  | "distillContext"
  | "nightlyMerge"
  | "recall"
  | "recallGlobal"
  | "topicUnrelated"
  | "topicRelated";

/**
 * Similarity thresholds per embedder kind, in force until the store is calibrated (calibration.ts):
 * vectorMin (vector hits below are noise), link (a new memory links to neighbours at or above),
 * distillMerge (a distilled memory this close to one of its project is that memory),
 * distillContext (memories below are not worth showing the distilling model), nightlyMerge
 * (near-duplicates merged at night), recall (the recall block's best line must reach it),
 * recallGlobal (a project-less memory recalled for a project), topicUnrelated / topicRelated
 * (a prompt below starts a new topic; above it continues the old one fully).
 * bge values are its typical spread (unrelated ~0.45, near ~0.8), not measured here.
 * See docs/decisions/similarity-calibration.md.
 */
export const THRESHOLD_DEFAULTS: Record<"onnx" | "fallback", Record<ThresholdName, number>> = {
  onnx: {
    vectorMin: 0.45,
    link: 0.78,
    distillMerge: 0.92,
    distillContext: 0.6,
    nightlyMerge: 0.95,
    recall: 0.55,
    recallGlobal: 0.8,
    topicUnrelated: 0.5,
    topicRelated: 0.7,
  },
  fallback: {
    vectorMin: 0.08,
    link: 0.45,
    distillMerge: 0.75,
    distillContext: 0.15,
    nightlyMerge: 0.9,
    recall: 0.1,
    recallGlobal: 0.45,
    topicUnrelated: 0.08,
    topicRelated: 0.3,
  },
};

/**
 * Each threshold as a position on the calibration scale (0 = median cosine of random pairs, 1 =
 * their p99, 2 = median nearest-neighbour cosine, 3 = identical), read off the fallback defaults
 * with its calibration of LoCoMo-dev, so calibrating the fallback reproduces its tuned constants.
 * See docs/decisions/similarity-calibration.md.
 */
export const CALIBRATION_POSITIONS: Record<ThresholdName, number> = {
  vectorMin: 0.08,
  link: 1.82,
  distillMerge: 2.52,
  distillContext: 0.34,
  nightlyMerge: 2.81,
  recall: 0.15,
  recallGlobal: 1.82,
  topicUnrelated: 0.08,
  topicRelated: 0.89,
};

/** Fewer memories than this do not give a stable spread: the kind's defaults apply. */
export const CALIBRATION_MIN_MEMORIES = 200;

/** Stored vectors sampled for random pairs (400 -> ~80k pairs, ~30 ms). */
export const CALIBRATION_RANDOM_SAMPLE = 400;

/** ...of which this many are searched for their nearest neighbour. */
export const CALIBRATION_NEAREST_SAMPLE = 200;

/** The store is measured again once it holds this many times the memories it was measured on. */
export const CALIBRATION_REGROW_FACTOR = 2;
