/**
 * The inputs of a score, as the ranking saw them, for receipts (GET
 * /recall/receipts, `memsvc why`). Recall and search combine them
 * differently (recall/gates.ts, search.ts); null: the part does not apply
 * (a memory the vectors did not find has no vector part; recall walks no
 * graph).
 */
export interface ScoreParts {
  /** Keyword evidence: recall, the prompt's words it holds in IDF units (1 = a word found in a single memory); search, the IDF-weighted share of the query it holds (0..1). */
  full_text: number | null;
  /** Cosine similarity to the (topic-blended) query. */
  vector: number | null;
  /** Search: what one hop of the graph added to its fused rank, as a share of the best possible rank; recall: null. */
  graph: number | null;
  /** The stored strength (before decay). */
  strength: number;
  /** Decay since its clock was last refreshed: the effective strength's share of the stored one (1: fresh). */
  recency: number;
  /** Recall: the evidence only the session topic's words bring (IDF units); search: null. */
  topic: number | null;
  /** 1, or the rank factor of a memory marked possibly outdated. */
  stale: number;
  /** Below 1 when feedback said the memory is irrelevant to queries like this one. */
  feedback?: number;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** Parts rounded for display and storage (three decimals; receipts are read by people). */
export function roundParts(p: ScoreParts): ScoreParts {
  const out: ScoreParts = {
    full_text: p.full_text === null ? null : r3(p.full_text),
    vector: p.vector === null ? null : r3(p.vector),
    graph: p.graph === null ? null : r3(p.graph),
    strength: r3(p.strength),
    recency: r3(p.recency),
    topic: p.topic === null ? null : r3(p.topic),
    stale: r3(p.stale),
  };
  if (p.feedback !== undefined) out.feedback = r3(p.feedback);
  return out;
}
