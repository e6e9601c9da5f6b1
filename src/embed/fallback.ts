import { keywords, stem } from "../core/text";
import { DIMENSIONS, type EmbedKind, type Embedder } from "./types";

/**
 * Deterministic offline embedder: signed feature hashing of stemmed words and
 * their character trigrams. It has no notion of synonyms, but it keeps the
 * server fully usable (lexical similarity, stable vectors) when no model file
 * can be had, and it needs no I/O at all.
 */
export class FallbackEmbedder implements Embedder {
  readonly id = "fallback:hash-v1";
  readonly kind = "fallback" as const;
  readonly description = "offline fallback (hashing, 384d)";

  async embed(texts: string[], _kind: EmbedKind): Promise<Float32Array[]> {
    return texts.map((t) => hashEmbed(t));
  }

  embedWeighted(text: string, weightOf: (stem: string) => number): Float32Array {
    return hashEmbed(text, weightOf);
  }
}

/**
 * `weightOf` scales each word's features (its own and its trigrams'; a
 * trigram shared by several words takes the largest weight). Documents are
 * embedded without it, so their vectors stay those of hash-v1; search weighs
 * the query's words by their IDF in the store (see QUERY_IDF_POWER).
 */
export function hashEmbed(text: string, weightOf?: (stem: string) => number): Float32Array {
  const v = new Float32Array(DIMENSIONS);
  const counts = new Map<string, number>();
  const scale = weightOf ? new Map<string, number>() : null;
  for (const w of keywords(text)) {
    const s = stem(w);
    const m = weightOf ? weightOf(s) : 1;
    counts.set(`w:${s}`, (counts.get(`w:${s}`) ?? 0) + 1);
    scale?.set(`w:${s}`, m);
    const padded = `^${s}$`;
    for (let i = 0; i + 3 <= padded.length; i++) {
      const g = `g:${padded.slice(i, i + 3)}`;
      counts.set(g, (counts.get(g) ?? 0) + 0.35);
      scale?.set(g, Math.max(scale.get(g) ?? 0, m));
    }
  }
  for (const [feature, count] of counts) {
    const h = fnv1a(feature);
    const weight = (1 + Math.log(count + 1)) * (feature.startsWith("w:") ? 1 : 0.5) * (scale?.get(feature) ?? 1);
    v[h % DIMENSIONS] += h & 0x80000000 ? -weight : weight;
  }
  let norm = 0;
  for (let i = 0; i < DIMENSIONS; i++) norm += v[i] * v[i];
  norm = Math.sqrt(norm);
  if (norm === 0) {
    // An empty or all-stop-word text still needs a unit vector for vec0.
    v[0] = 1;
    return v;
  }
  for (let i = 0; i < DIMENSIONS; i++) v[i] /= norm;
  return v;
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
