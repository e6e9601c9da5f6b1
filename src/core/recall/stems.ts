import { keywords, stem } from "../text";
import { RECALL_STEM_CACHE } from "./tuning";

const cache = new Map<string, readonly string[]>();

/**
 * The distinct stems of a memory's topic words in the order they first occur
 * (the order the gates' sums ran in before), memoised by the content. The
 * gates match every candidate's words against the prompt's on every prompt,
 * and tokenising and stemming contents of up to 1,500 characters was ~11% of
 * a /recall-index call's CPU (10k store, in process); a session's prompts
 * bring the same memories back. Keyed by content, not by id, so an edited
 * memory is read anew and there is nothing to invalidate; the least recently
 * used go past RECALL_STEM_CACHE entries.
 */
export function contentStems(content: string): readonly string[] {
  const known = cache.get(content);
  if (known) {
    // Map order is insertion order: moving a hit to the end makes the first key the least recently used.
    cache.delete(content);
    cache.set(content, known);
    return known;
  }
  const stems = [...new Set(keywords(content).map(stem))];
  cache.set(content, stems);
  if (cache.size > RECALL_STEM_CACHE) cache.delete(cache.keys().next().value!);
  return stems;
}
