import type { Services } from "../services";
import { withStorage } from "../storage";
import { absorbHistory } from "../memories";
import { thresholds } from "../search";
import { deleteMemory } from "../memories";
import type { RunContext } from "./types";
import { effectiveStrengthSql } from "../memories";
import { counted } from "../text";
import { expireRecallSessions } from "../recall";
import {
  IGNORED_DECAY_FACTOR,
  IGNORED_MIN_SHOWN,
  IGNORED_MIN_STRENGTH,
  MAX_STRENGTH,
  MERGE_MAX_PER_RUN,
  PRUNE_MAX_PER_RUN,
  PRUNE_MIN_AGE_DAYS,
  PRUNE_STRENGTH_FLOOR,
} from "../tuning";

const DAY_MS = 86_400_000;
const BATCH = 100;

interface MergeRow {
  seq: number;
  id: string;
  memory_type: string;
  project: string | null;
  strength: number;
  refreshed_at: number;
  used_count: number;
  link_count: number;
  eff: number;
}

function vectorOf(ctx: RunContext, seq: number): Float32Array | null {
  const r = ctx.s.store.sqlite.query<{ embedding: Uint8Array }, [number]>("SELECT embedding FROM memory_vec WHERE rowid = ?").get(seq);
  return r ? new Float32Array(r.embedding.buffer.slice(r.embedding.byteOffset, r.embedding.byteOffset + r.embedding.byteLength)) : null;
}

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
 */
export async function mergeStep(ctx: RunContext): Promise<void> {
  const { s, digest } = ctx;
  const threshold = thresholds(s).nightlyMerge;
  const select = s.store.sqlite.query<MergeRow, { now: number; start: number; end: number; after: number; session: string; limit: number }>(
    `SELECT seq, id, memory_type, project, strength, refreshed_at, used_count, link_count, ${effectiveStrengthSql()} AS eff FROM memories
      WHERE seq > :after AND ((created_at >= :start AND created_at < :end) OR (updated_at >= :start AND updated_at < :end) OR source_session = :session)
      ORDER BY seq LIMIT :limit`,
  );
  const bySeq = s.store.sqlite.query<MergeRow, { now: number; seqs: string }>(
    `SELECT seq, id, memory_type, project, strength, refreshed_at, used_count, link_count, ${effectiveStrengthSql()} AS eff FROM memories WHERE seq IN (SELECT value FROM json_each(:seqs))`,
  );
  const gone = new Set<number>();
  for (;;) {
    ctx.checkpoint();
    const batch = select.all({ now: s.now(), start: ctx.start, end: ctx.end, after: ctx.cursor.merge ?? 0, session: `nightly:${ctx.day}`, limit: BATCH });
    if (batch.length === 0 || digest.merged >= MERGE_MAX_PER_RUN) break;
    const work = async (ts: Services) => {
      for (const row of batch) {
        if (gone.has(row.seq) || digest.merged >= MERGE_MAX_PER_RUN) continue;
        const vec = vectorOf(ctx, row.seq);
        if (!vec) continue;
        const near = (await ts.storage.search.nearest(vec, 4, row.project ?? "")).filter((h) => h.seq !== row.seq && !gone.has(h.seq) && h.similarity >= threshold - 0.02);
        if (near.length === 0) continue;
        for (const other of bySeq.all({ now: s.now(), seqs: JSON.stringify(near.map((h) => h.seq)) })) {
          if (other.memory_type !== row.memory_type || other.project !== row.project) continue;
          const v2 = vectorOf(ctx, other.seq);
          if (!v2 || dot(vec, v2) < threshold) continue;
          const [keep, drop] = stronger(row, other) ? [row, other] : [other, row];
          if (!ctx.dryRun) await mergePair(ctx, keep, drop, ts);
          gone.add(drop.seq);
          digest.merged++;
          if (digest.merges.length < 50) digest.merges.push({ kept: keep.id.slice(0, 8), dropped: drop.id.slice(0, 8) });
          if (drop.seq === row.seq) break;
        }
      }
      ctx.cursor.merge = batch[batch.length - 1].seq;
      ctx.save();
    };
    if (ctx.dryRun) await work(s);
    else await s.storage.transaction((tx) => work(withStorage(s, tx)));
    ctx.progress("merge", `${digest.merged} near-duplicates merged`, undefined, undefined);
  }
  digest.steps.merge = "done";
  if (!ctx.dryRun) s.store.sqlite.transaction(() => ctx.save())();
}

function stronger(a: MergeRow, b: MergeRow): boolean {
  if (a.eff !== b.eff) return a.eff > b.eff;
  if (a.used_count !== b.used_count) return a.used_count > b.used_count;
  if (a.link_count !== b.link_count) return a.link_count > b.link_count;
  return a.seq < b.seq;
}

/**
 * Folds `drop` into `keep`; inside the caller's transaction. updated_at stays:
 * the content did not change, and the next night must not read it again.
 */
async function mergePair(ctx: RunContext, keep: MergeRow, drop: MergeRow, ts: Services): Promise<void> {
  const sql = ctx.s.store.sqlite;
  sql.run(
    `UPDATE memories SET
       shown_count = memories.shown_count + d.shown_count,
       used_count = memories.used_count + d.used_count,
       strength = min(?3, max(memories.strength, d.strength)),
       last_shown_at = nullif(max(coalesce(memories.last_shown_at, 0), coalesce(d.last_shown_at, 0)), 0),
       last_used_at = nullif(max(coalesce(memories.last_used_at, 0), coalesce(d.last_used_at, 0)), 0),
       refreshed_at = max(memories.refreshed_at, d.refreshed_at),
       created_at = min(memories.created_at, d.created_at)
     FROM (SELECT * FROM memories WHERE id = ?2) AS d WHERE memories.id = ?1`,
    [keep.id, drop.id, MAX_STRENGTH],
  );
  // Links follow the survivor (a link between the two disappears with `drop`).
  sql.run(
    `INSERT INTO links(from_id, to_id, relationship, weight, created_at)
       SELECT ?1, to_id, relationship, weight, created_at FROM links WHERE from_id = ?2 AND to_id != ?1
     ON CONFLICT(from_id, to_id, relationship) DO UPDATE SET weight = max(weight, excluded.weight)`,
    [keep.id, drop.id],
  );
  sql.run(
    `INSERT INTO links(from_id, to_id, relationship, weight, created_at)
       SELECT from_id, ?1, relationship, weight, created_at FROM links WHERE to_id = ?2 AND from_id != ?1
     ON CONFLICT(from_id, to_id, relationship) DO UPDATE SET weight = max(weight, excluded.weight)`,
    [keep.id, drop.id],
  );
  sql.run(
    `INSERT INTO memory_tags(memory_id, tag, weight) SELECT ?1, tag, weight FROM memory_tags WHERE memory_id = ?2
     ON CONFLICT(memory_id, tag) DO UPDATE SET weight = max(weight, excluded.weight)`,
    [keep.id, drop.id],
  );
  sql.run("UPDATE memory_events SET memory_id = ? WHERE memory_id = ?", [keep.id, drop.id]);
  sql.run("UPDATE OR IGNORE recall_shown SET memory_id = ? WHERE memory_id = ?", [keep.id, drop.id]);
  // The dropped text (and its own earlier versions) stay reachable as versions of the survivor.
  await absorbHistory(ts, keep.id, drop.id);
  await deleteMemory(ts, drop.id);
}

/**
 * Memories shown on the day (at least IGNORED_MIN_SHOWN times in all) and not
 * fetched since lose part of their stored strength: showing refreshes the
 * decay clock, so this is what lets an ignored memory fade. One statement,
 * committed with the step's state.
 */
export function decayStep(ctx: RunContext): void {
  const { s, digest } = ctx;
  const where = `shown_count >= :minShown AND strength > :floor
    AND id IN (SELECT memory_id FROM memory_events WHERE kind = 'shown' AND at >= :start AND at < :end)
    AND id NOT IN (SELECT memory_id FROM memory_events WHERE kind = 'used' AND at >= :start)`;
  const params = { minShown: IGNORED_MIN_SHOWN, floor: IGNORED_MIN_STRENGTH, start: ctx.start, end: ctx.end };
  if (ctx.dryRun) {
    digest.decayed = s.store.sqlite.query<{ n: number }, typeof params>(`SELECT count(*) AS n FROM memories WHERE ${where}`).get(params)!.n;
  } else {
    s.store.sqlite.transaction(() => {
      digest.decayed = s.store.sqlite
        .query<{ id: string }, typeof params & { factor: number }>(`UPDATE memories SET strength = max(:floor, strength * :factor) WHERE ${where} RETURNING id`)
        .all({ ...params, factor: IGNORED_DECAY_FACTOR }).length;
      digest.steps.decay = "done";
      ctx.save();
    })();
  }
  digest.steps.decay = "done";
  ctx.progress("decay", `${digest.decayed} ignored memories weakened`);
}

/**
 * Deletes what has faded for good (see PRUNE_* in tuning.ts), in batches that
 * each commit with the digest, and forgets recall sessions idle past their TTL.
 */
export async function pruneStep(ctx: RunContext): Promise<void> {
  const { s, digest } = ctx;
  const params = { now: s.now(), floor: PRUNE_STRENGTH_FLOOR, before: s.now() - PRUNE_MIN_AGE_DAYS * DAY_MS };
  const candidates = s.store.sqlite.query<{ id: string }, typeof params & { limit: number }>(
    `SELECT id FROM memories WHERE memory_type != 'learnings' AND used_count = 0 AND created_at < :before
       AND ${effectiveStrengthSql()} < :floor ORDER BY ${effectiveStrengthSql()} LIMIT :limit`,
  );
  if (ctx.dryRun) {
    digest.dropped = candidates.all({ ...params, limit: PRUNE_MAX_PER_RUN }).length;
    digest.sessions_expired = await expireRecallSessions(s, { dryRun: true });
    reportDroppedFragments(ctx, false);
    digest.steps.prune = "done";
    ctx.progress("prune", pruneDone(ctx));
    return;
  }
  while (digest.dropped < PRUNE_MAX_PER_RUN) {
    ctx.checkpoint();
    const batch = candidates.all({ ...params, limit: Math.min(BATCH, PRUNE_MAX_PER_RUN - digest.dropped) });
    if (batch.length === 0) break;
    await s.storage.transaction(async (tx) => {
      for (const r of batch) await deleteMemory(withStorage(s, tx), r.id);
      digest.dropped += batch.length;
      ctx.save();
    });
    ctx.progress("prune", `${digest.dropped} faded memories deleted`);
  }
  const expired = await expireRecallSessions(s);
  s.store.sqlite.transaction(() => {
    digest.sessions_expired += expired;
    reportDroppedFragments(ctx, true);
    digest.steps.prune = "done";
    ctx.save();
  })();
  ctx.progress("prune", pruneDone(ctx));
}

/** The line that closes "prune: starting". */
function pruneDone(ctx: RunContext): string {
  const d = ctx.digest;
  return `done (${counted(d.dropped, "faded memory", "faded memories")} deleted, ${counted(d.sessions_expired, "idle recall session")} forgotten, ${counted(d.dropped_fragments?.count ?? 0, "dropped fragment")} reported)`;
}

/**
 * The substance gate's rejects since the last run go to the log and the
 * digest (count by reason), then are forgotten; a dry run only counts them.
 */
function reportDroppedFragments(ctx: RunContext, forget: boolean): void {
  const { s, digest } = ctx;
  const rows = s.store.sqlite.query<{ id: number; reason: string; content: string }, []>("SELECT id, reason, content FROM distill_dropped ORDER BY id").all();
  // A run started by an older version resumes with a digest that lacks the field.
  digest.dropped_fragments ??= { count: 0, by_reason: {} };
  for (const r of rows) {
    digest.dropped_fragments.count++;
    digest.dropped_fragments.by_reason[r.reason] = (digest.dropped_fragments.by_reason[r.reason] ?? 0) + 1;
    if (!forget) continue;
    const line = `distill dropped (${r.reason}): ${r.content.replace(/\s+/g, " ").slice(0, 160)}`;
    s.log("info", `nightly: ${line}`);
    // The CLI's logger shows warnings only; its progress lines are what it prints.
    ctx.progress("prune", line);
  }
  if (forget && rows.length) s.store.sqlite.run("DELETE FROM distill_dropped WHERE id <= ?", [rows[rows.length - 1].id]);
}
