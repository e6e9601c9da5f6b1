import { DIMENSIONS } from "../../embed/types";
import { thresholds } from "../search";
import type { PromptTerm } from "./terms";
import type { Services } from "../services";
import { RECALL_TOPIC_DECAY, RECALL_TOPIC_FOLLOWUP_KEYWORDS, RECALL_TOPIC_TERMS, RECALL_TOPIC_WEIGHT } from "./tuning";

/**
 * The running topic of a recall session: a decayed sum of its prompts'
 * vectors and a decayed bag of their keywords. "and the tests?" says almost
 * nothing by itself; blended with the topic it asks for the tests of what
 * the session is about.
 */
export interface SessionTopic {
  vector: Float32Array;
  /** Keyword -> weight (1 for a word of the latest prompt, decaying per prompt). */
  terms: Record<string, number>;
}

/** How the topic enters one query: its weight (0 = not at all) and the blended vector. */
export interface TopicBlend {
  topic: SessionTopic;
  weight: number;
  /** Prompt-topic similarity in [0, 1]: 1 continues the topic, 0 changes it. */
  continuity: number;
}

function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  n = Math.sqrt(n);
  if (n > 0) for (let i = 0; i < v.length; i++) v[i] /= n;
  return v;
}

function cosine(a: Float32Array, b: Float32Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += a[i] * b[i];
  return d;
}

/** The topic as saved (JSON), or null when there is none, it is damaged, or it belongs to another embedder. */
export function parseTopic(s: Services, saved: string | null): SessionTopic | null {
  if (!saved) return null;
  try {
    const parsed = JSON.parse(saved) as { e?: string; v: string; t: Record<string, number> };
    // A topic from another vector space (the embedder changed) is not blended: the session starts a new one.
    if (parsed.e !== s.embedder.id) return null;
    const bytes = Buffer.from(parsed.v, "base64");
    if (bytes.byteLength !== DIMENSIONS * 4) return null;
    return { vector: new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)), terms: parsed.t ?? {} };
  } catch {
    // A damaged row: start a new topic.
    return null;
  }
}

/** The topic as the store keeps it: JSON with the vector in base64 and the embedder it belongs to. */
export function serializeTopic(s: Services, topic: SessionTopic): string {
  const v = Buffer.from(topic.vector.buffer, topic.vector.byteOffset, topic.vector.byteLength).toString("base64");
  return JSON.stringify({ e: s.embedder.id, v, t: topic.terms });
}

/**
 * How much the topic should weigh in this prompt's query. A prompt of one or
 * two keywords continues the topic; a longer one continues it as far as it
 * is similar to it (between the calibrated "unrelated" and "related"
 * similarities), so a real change of topic is not drowned by the old one.
 */
export function blendTopic(s: Services, topic: SessionTopic | null, vector: Float32Array, terms: readonly PromptTerm[]): TopicBlend | null {
  if (!topic) return null;
  const t = thresholds(s);
  const similarity = cosine(vector, topic.vector);
  const continuity =
    terms.length <= RECALL_TOPIC_FOLLOWUP_KEYWORDS
      ? 1
      : Math.min(1, Math.max(0, (similarity - t.topicUnrelated) / Math.max(1e-6, t.topicRelated - t.topicUnrelated)));
  return { topic, weight: RECALL_TOPIC_WEIGHT * continuity, continuity };
}

/** The query vector: the prompt's, pulled towards the topic by the blend's weight. */
export function blendedVector(vector: Float32Array, blend: TopicBlend | null): Float32Array {
  if (!blend || blend.weight === 0) return vector;
  const out = new Float32Array(vector.length);
  for (let i = 0; i < vector.length; i++) out[i] = vector[i] + blend.weight * blend.topic.vector[i];
  return normalize(out);
}

/** The topic after this prompt: the old one decayed (fully dropped on a change of topic) plus the prompt. */
export function nextTopic(blend: TopicBlend | null, vector: Float32Array, terms: readonly PromptTerm[]): SessionTopic {
  const keep = blend ? RECALL_TOPIC_DECAY * blend.continuity : 0;
  const v = new Float32Array(vector.length);
  for (let i = 0; i < v.length; i++) v[i] = vector[i] + (blend ? keep * blend.topic.vector[i] : 0);
  const bag = new Map<string, number>();
  if (blend) for (const [term, w] of Object.entries(blend.topic.terms)) if (w * keep >= 0.05) bag.set(term, w * keep);
  for (const t of terms) bag.set(t.term, Math.min(1, (bag.get(t.term) ?? 0) + 1));
  const kept = [...bag.entries()].sort((a, b) => b[1] - a[1]).slice(0, RECALL_TOPIC_TERMS);
  return { vector: normalize(v), terms: Object.fromEntries(kept.map(([k, w]) => [k, Math.round(w * 1000) / 1000])) };
}
