import type { Services } from "../services";

/**
 * Memories containing `term`, counted up to `cap` (the answer is `cap` when
 * there are at least that many). Shared by search, the recall index and the
 * domain index, so a word is counted once for all (the engine caches it).
 */
export function documentFrequency(s: Services, term: string, cap: number): Promise<number> {
  return s.storage.search.documentFrequency(term, cap);
}
