import { invalid } from "../../errors";
import type { ProjectScope } from "../scope";
import type { Services } from "../services";
import { encodeVector, reloadMarks } from "./feedback-marks";
import { resolveMemory } from "./memories";
import { strengthenedOnUse } from "./strength";
import { FEEDBACK_NOTE_CHARS } from "./tuning";

/**
 * Feedback on a memory, from the sessions page, the memory browser, `memsvc
 * feedback`, POST /feedback or the memsvc_feedback tool, so that it changes
 * what happens next:
 * - wrong: out of recall at once, marked for review in the browser; a
 *   rewrite (PATCH /memory), a restore or a review settles it (history keeps
 *   every version, so a restore brings a rewritten one back);
 * - outdated: a stale mark with the note, as `memsvc stale` makes (recall
 *   and search show it, and rank the memory lower), until a rewrite;
 * - irrelevant: demoted for prompts like the one it was shown for (that
 *   prompt's vector is kept; prompts far from it are not affected);
 * - useful: counts as a use (strengthens it, a `used` event).
 * Every feedback is a memory event (export, import and the nightly run see it).
 */
export const FEEDBACK_KINDS = ["wrong", "outdated", "useful", "irrelevant"] as const;
export type FeedbackKind = (typeof FEEDBACK_KINDS)[number];

/** Page actions on a memory that are events too: retire (out of recall and search, kept), unretire, and a review that settles `wrong`/`outdated`. */
export const REVIEW_ACTIONS = ["retired", "unretired", "reviewed"] as const;
export type ReviewAction = (typeof REVIEW_ACTIONS)[number];

export interface FeedbackInput {
  id?: unknown;
  kind?: unknown;
  note?: unknown;
  /** The receipt the memory was shown in (irrelevant: whose prompt it is irrelevant to; useful: marks it used there). */
  receipt?: unknown;
  /** irrelevant: the prompt it is irrelevant to, when no receipt keeps one. */
  prompt?: unknown;
}

export interface FeedbackContext {
  /** Where it came from: rest, mcp, cli, page. */
  source: string;
  /**
   * The prompt a receipt kept, by receipt id (or the memory's latest showing
   * when the id is null); given by the caller (receipts sit above memories).
   */
  promptOf: (receiptId: string | null, memoryId: string) => Promise<{ receipt: string; prompt: string | null } | null>;
  /** useful: records the use on the receipt (use detection's list). */
  markUsedOn?: (receiptId: string, memoryId: string) => Promise<void>;
}

export interface FeedbackResult {
  id: string;
  short_id: string;
  kind: FeedbackKind | ReviewAction;
  /** What changes now, in words. */
  effect: string;
  receipt?: string;
}

const optText = (v: unknown, field: string, max: number): string | null => {
  if (v === undefined || v === null || v === "") return null;
  if (typeof v !== "string") throw invalid(`${field} must be a string`);
  // eslint-disable-next-line no-control-regex
  const t = v.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ").trim();
  if (t.length > max) throw invalid(`${field} is longer than ${max} characters`);
  return t || null;
};

export function parseFeedbackKind(v: unknown): FeedbackKind {
  if (typeof v !== "string" || !(FEEDBACK_KINDS as readonly string[]).includes(v)) {
    throw invalid(`kind must be one of ${FEEDBACK_KINDS.join(", ")}${typeof v === "string" ? `, got "${v.slice(0, 40)}"` : ""}`);
  }
  return v as FeedbackKind;
}

async function addEvent(s: Services, memoryId: string, kind: string, detail: Record<string, unknown>): Promise<void> {
  const clean = Object.fromEntries(Object.entries(detail).filter(([, v]) => v !== null && v !== undefined));
  await s.storage.feedback.addEvent({ memoryId, kind, at: s.now(), detail: Object.keys(clean).length ? JSON.stringify(clean) : null });
}

/** POST /feedback, `memsvc feedback`, memsvc_feedback. */
export async function giveFeedback(s: Services, input: FeedbackInput, ctx: FeedbackContext): Promise<FeedbackResult> {
  const kind = parseFeedbackKind(input.kind);
  const row = await resolveMemory(s, input.id);
  const note = optText(input.note, "note", FEEDBACK_NOTE_CHARS);
  const receiptId = optText(input.receipt, "receipt", 64);
  const base = { id: row.id, short_id: row.id.slice(0, 8), kind };
  const common = { note, source: ctx.source, receipt: receiptId };
  switch (kind) {
    case "wrong":
      await addEvent(s, row.id, "wrong", common);
      await reloadMarks(s);
      return {
        ...base,
        effect:
          "out of recall from now on and marked for review in the memory browser; rewriting or restoring it (history keeps every version) settles the mark",
      };
    case "outdated":
      await addEvent(s, row.id, "outdated", common);
      await reloadMarks(s);
      return {
        ...base,
        effect: `marked possibly outdated${note ? ` ("${note}")` : ""}: recall and search show the mark and rank it lower until it is rewritten`,
      };
    case "useful": {
      const updated = await s.storage.memories.markUsed(row.id, s.now(), strengthenedOnUse(row.strength));
      if (!updated) throw invalid(`memory ${row.id.slice(0, 8)} was deleted meanwhile`);
      await addEvent(s, row.id, "useful", common);
      if (receiptId && ctx.markUsedOn) await ctx.markUsedOn(receiptId, row.id);
      return { ...base, effect: "counted as a use: strengthened, and its decay clock refreshed", ...(receiptId ? { receipt: receiptId } : {}) };
    }
    case "irrelevant": {
      let prompt = optText(input.prompt, "prompt", 4000);
      let receipt = receiptId;
      if (prompt === null) {
        const found = await ctx.promptOf(receiptId, row.id);
        if (!found)
          throw invalid(
            `memory ${row.id.slice(0, 8)} has no receipt ${receiptId ? receiptId : "of a prompt that showed it"}: give the prompt it is irrelevant to (prompt)`,
          );
        if (found.prompt === null)
          throw invalid(`receipt ${found.receipt} keeps only its prompt's hash (recall.receiptPrompt "hash"): give the prompt it is irrelevant to (prompt)`);
        prompt = found.prompt;
        receipt = found.receipt;
      }
      const [vector] = await s.embedder.embed([prompt], "query");
      await addEvent(s, row.id, "irrelevant", { ...common, receipt, vector: encodeVector(vector), embedder: s.embedder.id });
      await reloadMarks(s);
      return { ...base, effect: "demoted for prompts like this one (other topics still recall it)", ...(receipt ? { receipt } : {}) };
    }
  }
}

/** POST /memory/review: retire (out of recall and search, kept with its history), unretire, or settle a wrong/outdated mark. */
export async function reviewMemory(s: Services, input: { id?: unknown; action?: unknown; note?: unknown }, source: string): Promise<FeedbackResult> {
  const actions: Record<string, ReviewAction> = { retire: "retired", unretire: "unretired", review: "reviewed" };
  const action = typeof input.action === "string" ? actions[input.action] : undefined;
  if (!action) throw invalid(`action must be one of ${Object.keys(actions).join(", ")}`);
  const row = await resolveMemory(s, input.id);
  await addEvent(s, row.id, action, { note: optText(input.note, "note", FEEDBACK_NOTE_CHARS), source });
  await reloadMarks(s);
  const effect =
    action === "retired"
      ? "retired: out of recall and search, kept with its history (unretire brings it back)"
      : action === "unretired"
        ? "back in recall and search"
        : "review done: its wrong and outdated marks are settled";
  return { id: row.id, short_id: row.id.slice(0, 8), kind: action, effect };
}

/** Feedback events per kind in [since, until) (the dashboard, the nightly digest); within a scope, of its memories only. */
export async function feedbackCounts(s: Services, since: number, until = Number.MAX_SAFE_INTEGER, scope: ProjectScope = null): Promise<Record<string, number>> {
  const out: Record<string, number> = { wrong: 0, outdated: 0, useful: 0, irrelevant: 0, retired: 0 };
  for (const r of await s.storage.feedback.counts(since, until, scope)) if (r.kind in out) out[r.kind] = r.n;
  return out;
}
