import type { Services } from "../services";
import { QUERY_IDF_POWER } from "./tuning";
import { queryTerms } from "./score";

/**
 * The vector a search looks up. A model embeds the query as it is. The
 * hashing fallback has no notion of which words matter: a speaker's name or
 * "project" weighs as much as the topic, so its nearest neighbours are
 * whatever shares the commonest words. Weighing each query word by its IDF in
 * this store (the counts search already takes for scoring, cached) makes
 * those neighbours the memories sharing the query's rare words. Only the
 * query changes: stored vectors, the embedder id and its calibration stay.
 */
export async function queryVector(s: Services, query: string): Promise<Float32Array> {
  const embedWeighted = s.embedder.embedWeighted?.bind(s.embedder);
  // An empty store, or PostgreSQL's vector count not read yet: no IDF to weigh by.
  if (!embedWeighted || s.index.size === 0) return (await s.embedder.embed([query], "query"))[0];
  const q = await queryTerms(s, query);
  const idf = new Map(q.stems.map((st, i) => [st, q.weights[i]]));
  // Words past QUERY_MAX_TERMS or QUERY_MAX_CHARS were not counted: they weigh as an average word.
  const average = q.stems.length ? q.total / q.stems.length : 1;
  return embedWeighted(query, (st) => (idf.get(st) ?? average) ** QUERY_IDF_POWER);
}
