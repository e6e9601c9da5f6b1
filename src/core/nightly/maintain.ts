import { absorbHistory, deleteMemory, effectiveStrength, feedbackCounts } from "../memories";
import { thresholds } from "../search";
import type { NightlyMergeRow } from "./store";
import type { RunContext } from "./types";
import { withStorage, type Storage } from "../storage";
import { counted } from "../text";
import { expireRecallSessions } from "../recall";
import { heldBack } from "./held";
import {
  IGNORED_DECAY_FACTOR,
  IGNORED_MIN_SHOWN,
  IGNORED_MIN_STRENGTH,
  MERGE_MAX_PER_RUN,
  PRUNE_MAX_PER_RUN,
  PRUNE_MIN_AGE_DAYS,
  PRUNE_STRENGTH_FLOOR,
} from "./tuning";
import { MAX_STRENGTH } from "../memories/tuning";

const DAY_MS = 86_400_000;
const BATCH = 100;

const dot = (a: Float32Array, b: Float32Array) => {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += a[i] * b[i];
  return d;
};

/**
 * Near-duplicates among the day's memories (and tonight's learnings) and their
 * nearest neighbours: same project, same type, cosine at or above the merge
 * threshold (confirmed on the stored float vectors, not the index's int8
 * copy). The stronger one stays and absorbs the other's counters, links,
 * tags and history; the other is deleted the way DELETE /memory does it.
 * A pair with a memory feedback holds back (held.ts) stays unmerged.
 * One transaction per merge (with the digest); the cursor moves per batch.
 */
export async function mergeStep(ctx: RunContext): Promise<void> {
  const { s, digest } = ctx;
  const store = s.storage.nightly;
  const threshold = thresholds(s).nightlyMerge;
  const held = await heldBack(s);
  digest.held_back ??= { learn: 0, merge: 0 };
  const heldPairs = new Set<string>();
  const gone = new Set<number>();
  for (;;) {
    ctx.checkpoint();
    const batch = await store.mergeCandidates(ctx.start, ctx.end, `nightly:${ctx.day}`, ctx.cursor.merge ?? 0, BATCH);
    if (batch.length === 0 || digest.merged >= MERGE_MAX_PER_RUN) break;
    for (const row of batch) {
      if (gone.has(row.seq) || digest.merged >= MERGE_MAX_PER_RUN) continue;
      const vec = await store.vectorOf(row.seq);
      if (!vec) continue;
      const hits = store.nearest ? await store.nearest(row.seq, 4, row.project) : await s.storage.search.nearest(vec, 4, row.project ?? "");
      const near = hits.filter((h) => h.seq !== row.seq && !gone.has(h.seq) && h.similarity >= threshold - 0.02);
      if (near.length === 0) continue;
      const now = s.now();
      for (const other of await store.mergeRowsBySeq(near.map((h) => h.seq))) {
        if (other.memoryType !== row.memoryType || other.project !== row.project) continue;
        const v2 = await store.vectorOf(other.seq);
        if (!v2 || dot(vec, v2) < threshold) continue;
        if (held.has(row.id) || held.has(other.id)) {
          // Each pair once, though both of its memories may be the day's and meet it.
          const pair = row.seq < other.seq ? `${row.seq}:${other.seq}` : `${other.seq}:${row.seq}`;
          if (!heldPairs.has(pair)) digest.held_back.merge++;
          heldPairs.add(pair);
          continue;
        }
        const [keep, drop] = stronger(row, other, now) ? [row, other] : [other, row];
        ctx.checkpoint();
        digest.merged++;
        if (digest.merges.length < 50) digest.merges.push({ kept: keep.id.slice(0, 8), dropped: drop.id.slice(0, 8) });
        if (!ctx.dryRun) await mergePair(ctx, keep, drop);
        gone.add(drop.seq);
        if (drop.seq === row.seq) break;
      }
    }
    ctx.cursor.merge = batch[batch.length - 1].seq;
    if (!ctx.dryRun) await ctx.save();
    ctx.progress("merge", `${digest.merged} near-duplicates merged`, undefined, undefined);
  }
  digest.steps.merge = "done";
  if (!ctx.dryRun) await ctx.save();
}

function stronger(a: NightlyMergeRow, b: NightlyMergeRow, now: number): boolean {
  const ea = effectiveStrength(a.strength, a.refreshedAt, now);
  const eb = effectiveStrength(b.strength, b.refreshedAt, now);
  if (ea !== eb) return ea > eb;
  if (a.usedCount !== b.usedCount) return a.usedCount > b.usedCount;
  if (a.linkCount !== b.linkCount) return a.linkCount > b.linkCount;
  return a.seq < b.seq;
}

/**
 * Folds `drop` into `keep` in one transaction with the digest: counters, links,
 * tags, events (nightly's store), then its history and the row itself
 * (memories/). A failure rolls all of it back and the digest's count with it.
 */
async function mergePair(ctx: RunContext, keep: NightlyMergeRow, drop: NightlyMergeRow): Promise<void> {
  const { s } = ctx;
  try {
    await s.storage.transaction(async (tx) => {
      await tx.nightly.foldInto(keep.id, drop.id, MAX_STRENGTH);
      // The dropped text (and its own earlier versions) stay reachable as versions of the survivor.
      await absorbHistory(withStorage(s, tx), keep.id, drop.id);
      await deleteMemory(withStorage(s, tx), drop.id);
      await ctx.save(tx);
    });
  } catch (e) {
    ctx.digest.merged--;
    ctx.digest.merges = ctx.digest.merges.filter((m) => m.dropped !== drop.id.slice(0, 8));
    throw e;
  }
}

/**
 * Memories shown on the day (at least IGNORED_MIN_SHOWN times in all) and not
 * fetched since lose part of their stored strength: showing refreshes the
 * decay clock, so this is what lets an ignored memory fade. One statement,
 * committed with the step's state.
 */
export async function decayStep(ctx: RunContext): Promise<void> {
  const { s, digest } = ctx;
  // The day's feedback, in the digest: what people and agents said of the memories that were shown.
  digest.feedback = await feedbackCounts(s, ctx.start, ctx.end);
  const params = { minShown: IGNORED_MIN_SHOWN, floor: IGNORED_MIN_STRENGTH, factor: IGNORED_DECAY_FACTOR, start: ctx.start, end: ctx.end };
  if (ctx.dryRun) {
    digest.decayed = await s.storage.nightly.decayIgnored(params, true);
  } else {
    await s.storage.transaction(async (tx) => {
      digest.decayed = await tx.nightly.decayIgnored(params, false);
      digest.steps.decay = "done";
      await ctx.save(tx);
    });
  }
  digest.steps.decay = "done";
  ctx.progress("decay", `${counted(digest.decayed, "ignored memory", "ignored memories")} weakened`);
}

/**
 * Deletes what has faded for good (see PRUNE_* in tuning.ts) but what feedback
 * holds back, in batches that each commit with the digest, and forgets recall
 * sessions idle past their TTL.
 */
export async function pruneStep(ctx: RunContext): Promise<void> {
  const { s, digest } = ctx;
  // Feedback's held-back memories are out of recall, so they fade: they wait for their review (or stay retired), not the prune.
  const exclude = [...(await heldBack(s))];
  const params = { now: s.now(), floor: PRUNE_STRENGTH_FLOOR, before: s.now() - PRUNE_MIN_AGE_DAYS * DAY_MS, exclude };
  if (ctx.dryRun) {
    digest.dropped = (await s.storage.nightly.pruneCandidates({ ...params, limit: PRUNE_MAX_PER_RUN })).length;
    digest.sessions_expired = await expireRecallSessions(s, { dryRun: true });
    await reportDroppedFragments(ctx, null);
    digest.steps.prune = "done";
    ctx.progress("prune", pruneDone(ctx));
    return;
  }
  while (digest.dropped < PRUNE_MAX_PER_RUN) {
    ctx.checkpoint();
    const batch = await s.storage.nightly.pruneCandidates({ ...params, limit: Math.min(BATCH, PRUNE_MAX_PER_RUN - digest.dropped) });
    if (batch.length === 0) break;
    await s.storage.transaction(async (tx) => {
      for (const r of batch) await deleteMemory(withStorage(s, tx), r.id);
      digest.dropped += batch.length;
      try {
        await ctx.save(tx);
      } catch (e) {
        digest.dropped -= batch.length;
        throw e;
      }
    });
    ctx.progress("prune", `${counted(digest.dropped, "faded memory", "faded memories")} deleted`);
  }
  await s.storage.transaction(async (tx) => {
    digest.sessions_expired += await expireRecallSessions(withStorage(s, tx));
    await reportDroppedFragments(ctx, tx);
    digest.steps.prune = "done";
    await ctx.save(tx);
  });
  ctx.progress("prune", pruneDone(ctx));
}

/** The line that closes "prune: starting". */
function pruneDone(ctx: RunContext): string {
  const d = ctx.digest;
  return `done (${counted(d.dropped, "faded memory", "faded memories")} deleted, ${counted(d.sessions_expired, "idle recall session")} forgotten, ${counted(d.dropped_fragments?.count ?? 0, "dropped fragment")} reported)`;
}

/**
 * The substance gate's rejects since the last run go to the log and the
 * digest (count by reason), then are forgotten (inside `tx`, the prune step's
 * last transaction); a dry run (no `tx`) only counts them.
 */
async function reportDroppedFragments(ctx: RunContext, tx: Storage | null): Promise<void> {
  const { s, digest } = ctx;
  const rows = await (tx ?? s.storage).nightly.droppedFragments();
  // A run started by an older version resumes with a digest that lacks the field.
  digest.dropped_fragments ??= { count: 0, by_reason: {} };
  for (const r of rows) {
    digest.dropped_fragments.count++;
    digest.dropped_fragments.by_reason[r.reason] = (digest.dropped_fragments.by_reason[r.reason] ?? 0) + 1;
    if (!tx) continue;
    const line = `distill dropped (${r.reason}): ${r.content.replace(/\s+/g, " ").slice(0, 160)}`;
    s.log("info", `nightly: ${line}`);
    // The CLI's logger shows warnings only; its progress lines are what it prints.
    ctx.progress("prune", line);
  }
  if (tx && rows.length) await tx.nightly.forgetDroppedFragments(rows[rows.length - 1].id);
}
