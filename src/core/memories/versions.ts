import type { Services } from "../services";
import { MEMORY_HISTORY_MAX } from "./tuning";

/**
 * Earlier versions of a memory. Whatever replaces a memory's content (PATCH
 * and memsvc_update, a restore, a distill that restates or corrects it, a
 * nightly merge) calls recordVersion inside the same transaction as the
 * change, so a version is never lost or recorded for a change that did not
 * commit. Versions go with their memory on delete (foreign key cascade):
 * deleting is forgetting.
 */

export type HistoryReason = "update" | "restore" | "distill" | "nightly-merge" | "recheck";

export interface Snapshot {
  content: string;
  memoryType: string;
  project: string | null;
}

/** Keeps `prior` as the memory's next version; call with withStorage(s, tx) inside the transaction that replaces it. */
export function recordVersion(
  s: Services,
  memoryId: string,
  prior: Snapshot,
  reason: HistoryReason,
  sourceId: string | null = null,
  at = s.now(),
): Promise<number> {
  return s.storage.memories.addVersion(memoryId, { ...prior, reason, sourceId, replacedAt: at }, MEMORY_HISTORY_MAX);
}

/** The current content of `memoryId` as a snapshot (inside a transaction: what is about to be replaced). */
export function currentSnapshot(s: Services, memoryId: string): Promise<Snapshot | null> {
  return s.storage.memories.snapshot(memoryId);
}

/**
 * A nightly merge folds `dropId` into `keepId`: the dropped memory's own
 * history moves over (renumbered after the survivor's), then its text is
 * recorded as a version of the survivor. Inside the merge's transaction
 * (`s` is withStorage(s, tx)).
 */
export async function absorbHistory(s: Services, keepId: string, dropId: string): Promise<void> {
  const dropped = await currentSnapshot(s, dropId);
  if (!dropped) return;
  for (const r of await s.storage.memories.versions(dropId)) {
    await recordVersion(
      s,
      keepId,
      { content: r.content, memoryType: r.memoryType, project: r.project },
      r.reason as HistoryReason,
      r.sourceId ?? dropId,
      r.replacedAt,
    );
  }
  await s.storage.memories.deleteVersions(dropId);
  await recordVersion(s, keepId, dropped, "nightly-merge", dropId);
}
