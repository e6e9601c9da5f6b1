import { currentMarks } from "../memories";
import type { Services } from "../services";

/**
 * The memories feedback holds back from the nightly run: marked wrong or
 * outdated and not yet settled (reviewed, rewritten, restored), or retired.
 * The run leaves them as they are for the person who reviews them:
 * - learn: not shown to the model, so no learning restates what was
 *   reported false or stale, or grows out of what was retired;
 * - merge: not merged with a near-duplicate either way, so their strength,
 *   counters and marks never pass to another memory (and a merge never
 *   refreshes them), nor does a live memory vanish into a retired one;
 * - prune: not deleted when they fade (they are out of recall, so they
 *   fade): one waits for its review, a retired one stays until deleted.
 * Read afresh from the events (not recall's cache): exact at the run's start.
 */
export async function heldBack(s: Services): Promise<Set<string>> {
  const held = new Set<string>();
  for (const [id, m] of await currentMarks(s)) if (m.wrong || m.outdated || m.retired) held.add(id);
  return held;
}
