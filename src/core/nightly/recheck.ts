import { AppError } from "../../errors";
import type { LlmClient } from "../../llm/client";
import { recheckMessages } from "../../llm/recheck-prompt";
import { isoDate } from "../dates";
import { callWithDeadline } from "../distill/model";
import { deleteMemory, updateMemory, type ConfirmedAnchor, type RecheckAnchorRow } from "../memories";
import type { StaleMark } from "../memories/anchors";
import { staleNote } from "../memories/anchors";
import { redact } from "../secrets";
import type { Services } from "../services";
import { withStorage } from "../storage";
import { counted } from "../text";
import { DISTILL_MEMORY_MAX_CHARS } from "../distill/tuning";
import { RECHECK_SCAN_MAX } from "./tuning";
import type { RecheckDigest, RunContext } from "./types";

/**
 * The nightly re-check of memories marked possibly stale (`memsvc stale`,
 * the session-start hook). Per memory, the model reads the memory, the
 * evidence kept at /distill (the session lines it came from) and what
 * changed (paths, commit count, last change date: the server has no code),
 * and answers a verdict:
 *
 * - confirm: the anchor moves to the commit the mark was made at (its
 *   `head`) and the mark goes, so `memsvc stale` compares from there: the same
 *   changes never mark it again, newer ones do. A path that no longer exists
 *   leaves the anchor; an anchor left without paths, or in a repository that
 *   is gone, is removed (nothing is left to check it against).
 * - rewrite: the new text goes through the normal update path (the old text
 *   becomes a version, reason "recheck"; re-embedded), and the anchors are
 *   settled as for confirm, in the same transaction.
 * - retire: the memory is deleted the way DELETE /memory deletes it (its
 *   versions, anchors and evidence with it: deleting is forgetting), as
 *   pruning does; the digest keeps its short id and the model's reason.
 *
 * One model call per memory per mark: an answer that is no usable verdict
 * changes nothing and records that the mark was answered (the mark stays);
 * a call that fails or times out changes nothing and stops the step (the
 * next run asks again). Without a model, or with distill.keepEvidence off,
 * the marks stay and the digest says the re-check is owed. Each memory's
 * outcome commits with the digest; a settle applies only while the anchor
 * still holds the mark the model saw (a newer mark waits for the next run).
 */

export const newRecheckDigest = (): RecheckDigest => ({ due: 0, no_evidence: 0, confirmed: 0, rewritten: 0, retired: 0, unusable: 0, failed: 0, checks: [] });

/** What makes two marks "the same changes": everything but the HEAD and the time the client compared (they move with unrelated commits). */
export function markKey(staleText: string): string {
  try {
    const m = JSON.parse(staleText) as StaleMark;
    return JSON.stringify([m.reason, [...(m.changed_paths ?? [])].sort(), [...(m.missing_paths ?? [])].sort(), m.commits ?? 0, m.last_change ?? null]);
  } catch {
    return staleText;
  }
}

export type Verdict = { verdict: "confirm"; reason: string } | { verdict: "retire"; reason: string } | { verdict: "rewrite"; content: string; reason: string };

/** The model's answer, or null when it is no usable verdict (unknown verdict, a rewrite without new text). */
export function parseVerdict(answer: unknown): Verdict | null {
  if (!answer || typeof answer !== "object" || Array.isArray(answer)) return null;
  const a = answer as Record<string, unknown>;
  const verdict = typeof a.verdict === "string" ? a.verdict.trim().toLowerCase() : "";
  const reason = typeof a.reason === "string" ? a.reason.replace(/\s+/g, " ").trim().slice(0, 300) : "";
  if (verdict === "confirm" || verdict === "retire") return { verdict, reason };
  if (verdict !== "rewrite") return null;
  const content = typeof a.content === "string" ? a.content.trim() : "";
  if (content.length < 12 || content.length > DISTILL_MEMORY_MAX_CHARS) return null;
  return { verdict, content, reason };
}

interface Due {
  id: string;
  /** The marked anchors whose mark is still unanswered (the ones a verdict settles). */
  anchors: RecheckAnchorRow[];
  /** Every excerpt the memory has, from any of its marked anchors. */
  evidence: string[];
}

/** Marked memories whose current mark the model has not answered for, and how many of them have no evidence. */
async function dueMemories(s: Services): Promise<{ due: Due[]; noEvidence: number }> {
  const groups = new Map<string, RecheckAnchorRow[]>();
  for (const r of await s.storage.memories.staleAnchors(RECHECK_SCAN_MAX)) groups.set(r.memoryId, [...(groups.get(r.memoryId) ?? []), r]);
  const due: Due[] = [];
  let noEvidence = 0;
  for (const [id, anchors] of groups) {
    const open = anchors.filter((a) => a.rechecked !== markKey(a.staleText));
    if (open.length === 0) continue;
    if (!anchors.some((a) => a.evidence)) noEvidence++;
    else due.push({ id, anchors: open, evidence: [...new Set(anchors.map((a) => a.evidence).filter((e): e is string => !!e))] });
  }
  return { due, noEvidence };
}

/** What a confirmation makes of one marked anchor (see the module comment). */
function settlement(a: RecheckAnchorRow, at: number): { kind: "confirmed"; anchor: ConfirmedAnchor } | { kind: "delete" } {
  const mark = JSON.parse(a.staleText) as StaleMark;
  if (mark.reason === "repo-deleted") return { kind: "delete" };
  const missing = new Set(mark.missing_paths ?? []);
  const paths = a.paths.filter((p) => !missing.has(p));
  if (paths.length === 0) return { kind: "delete" };
  return { kind: "confirmed", anchor: { commit: mark.head ?? a.commit, paths, at } };
}

const describeChange = (a: RecheckAnchorRow): string => {
  const mark = JSON.parse(a.staleText) as StaleMark;
  const parts = [`- repository ${a.repo}: ${staleNote(mark)}`];
  if (mark.changed_paths?.length) parts.push(`  changed: ${mark.changed_paths.join(", ")}`);
  if (mark.missing_paths?.length) parts.push(`  no longer exist: ${mark.missing_paths.join(", ")}`);
  if (mark.commits)
    parts.push(`  ${counted(mark.commits, "commit")} touched them${mark.last_change ? `, the last on ${isoDate(Date.parse(mark.last_change))}` : ""}`);
  return parts.join("\n");
};

export async function recheckStep(ctx: RunContext, llm: LlmClient | null): Promise<void> {
  const { s, digest } = ctx;
  const r = (digest.recheck ??= newRecheckDigest());
  const { due, noEvidence } = await dueMemories(s);
  // A resumed step finds fewer due (the settled ones are done): the counts keep the larger figure.
  r.due = Math.max(r.due, due.length + noEvidence);
  r.no_evidence = Math.max(r.no_evidence, noEvidence);
  // "incomplete": owed (no model, or it failed), so a resumed run of this day with a model does it.
  const finish = async (reason: string | null, left: number, state: "done" | "incomplete" = "done") => {
    if (reason && left > 0) digest.skipped.push({ step: "recheck", reason, memories: left });
    digest.steps.recheck = left > 0 ? state : "done";
    if (!ctx.dryRun) await ctx.save();
    ctx.progress(
      "recheck",
      `${r.confirmed} confirmed, ${r.rewritten} rewritten, ${r.retired} retired${r.unusable ? `, ${counted(r.unusable, "unusable answer")}` : ""}${left ? `; ${counted(left, "stale memory", "stale memories")} keep their mark` : ""}`,
    );
  };
  if (noEvidence > 0)
    digest.skipped.push({
      step: "recheck",
      reason: "no evidence kept for them (anchored through /ingest, or distill.keepEvidence was off): their stale mark stays",
      memories: noEvidence,
    });
  if (due.length === 0) return finish(null, 0);
  if (!s.config.distill.keepEvidence) return finish("distill.keepEvidence is off: nothing to re-check against; the stale marks stay", due.length);
  if (!llm)
    return finish(
      "no language model configured (llm.baseURL and llm.model): the stale marks stay; re-check owed to the next nightly run with a model",
      due.length,
      "incomplete",
    );
  if (ctx.dryRun) {
    const calls = Math.min(due.length, Math.max(0, digest.max_model_calls - digest.model_calls));
    digest.model_calls += calls;
    return finish(calls < due.length ? `model call cap reached (nightly.maxModelCalls = ${digest.max_model_calls})` : null, due.length - calls);
  }
  for (let k = 0; k < due.length; k++) {
    ctx.checkpoint();
    const item = due[k];
    if (digest.model_calls >= digest.max_model_calls)
      return finish(
        `model call cap reached (nightly.maxModelCalls = ${digest.max_model_calls}): the stale marks stay; the next run re-checks them`,
        due.length - k,
      );
    const row = await s.storage.memories.memoryById(item.id);
    if (!row) continue;
    ctx.progress("recheck", `asking ${llm.label} about stale memory ${item.id.slice(0, 8)}`, k, due.length);
    // Stored memories predating full redaction may hold a secret: none goes to the model (chatJson redacts too).
    const messages = recheckMessages({
      content: await redact(row.content),
      memoryType: row.memoryType,
      date: isoDate(row.createdAt),
      changes: item.anchors.map(describeChange),
      evidence: item.evidence,
    });
    let answer: unknown;
    try {
      answer = await callWithDeadline(llm, messages, s.config.llm.timeoutMs);
    } catch (e) {
      ctx.checkpoint();
      digest.model_calls++;
      const message = (e as Error).message;
      // The model answered, but prose or nothing: an unusable verdict, not an outage (the next memory is asked).
      if (NOT_AN_ANSWER.test(message)) {
        await settle(ctx, item, null, message);
        continue;
      }
      r.failed++;
      digest.errors.push(`recheck ${item.id.slice(0, 8)}: ${message}`);
      note(r, item.id, "failed", message);
      s.log("warn", `nightly recheck of ${item.id.slice(0, 8)}: the language model failed: ${message}; the mark stays`);
      return finish(`the language model failed: ${message}; the stale marks stay and the next run re-checks them`, due.length - k, "incomplete");
    }
    digest.model_calls++;
    const verdict = parseVerdict(answer);
    // Model output goes to the digest and the log: a secret it echoed must not.
    if (verdict) verdict.reason = await redact(verdict.reason);
    await settle(ctx, item, verdict, await redact(JSON.stringify(answer ?? null).slice(0, 200)));
  }
  return finish(null, 0);
}

/** The LLM client's messages for a reply that came but holds no JSON (src/llm/client.ts). */
const NOT_AN_ANSWER = /answered something that is not JSON|returned an empty reply/;

function note(r: RecheckDigest, id: string, verdict: string, reason: string) {
  if (r.checks.length < 50) r.checks.push({ id: id.slice(0, 8), verdict, reason: reason.slice(0, 300) });
}

/** Applies one verdict with the digest, in one transaction; a failure rolls back both. */
async function settle(ctx: RunContext, item: Due, verdict: Verdict | null, raw: string): Promise<void> {
  const { s, digest } = ctx;
  const r = digest.recheck!;
  const before = { ...r, checks: r.checks.length };
  const short = item.id.slice(0, 8);
  const undo = () => {
    Object.assign(r, { ...before, checks: r.checks.slice(0, before.checks) });
  };
  const settleAll = async (ts: Services) => {
    for (const a of item.anchors) await ts.storage.memories.settleAnchor(a.memoryId, a.repo, a.staleText, settlement(a, s.now()));
  };
  try {
    if (verdict === null) {
      r.unusable++;
      note(r, item.id, "unusable", raw);
      s.log("warn", `nightly recheck of ${short}: the model's answer is no usable verdict (${raw}); nothing changed, the mark stays`);
      await s.storage.transaction(async (tx) => {
        for (const a of item.anchors) await tx.memories.settleAnchor(a.memoryId, a.repo, a.staleText, { kind: "checked", rechecked: markKey(a.staleText) });
        await ctx.save(tx);
      });
    } else if (verdict.verdict === "confirm") {
      r.confirmed++;
      note(r, item.id, "confirm", verdict.reason);
      await s.storage.transaction(async (tx) => {
        await settleAll(withStorage(s, tx));
        await ctx.save(tx);
      });
    } else if (verdict.verdict === "retire") {
      r.retired++;
      note(r, item.id, "retire", verdict.reason);
      await s.storage.transaction(async (tx) => {
        await deleteMemory(withStorage(s, tx), item.id);
        await ctx.save(tx);
      });
      s.log("info", `nightly recheck retired ${short}: ${verdict.reason}`);
    } else {
      r.rewritten++;
      note(r, item.id, "rewrite", verdict.reason);
      await updateMemory(s, { id: item.id, content: verdict.content }, "recheck", async (ts) => {
        await settleAll(ts);
        await ctx.save(ts.storage);
      });
    }
  } catch (e) {
    undo();
    // Deleted meanwhile (DELETE /memory, a merge): nothing left to re-check.
    if (e instanceof AppError && e.code === "not_found") return;
    throw e;
  }
}
