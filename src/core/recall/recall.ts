import { AppError, invalid } from "../../errors";
import { inProjectScope, type ProjectScope } from "../scope";
import { staleNote } from "../memories";
import { isoDate } from "../dates";
import { inlineMarkdown } from "../identity";
import { recallSelection, type RecallCandidate } from "./gates";
import { RECEIPT_DROPPED_MAX, flushReceipts, getReceipt, receiptView, recordReceipt, type ReceiptDrop, type ReceiptView } from "../receipts";
import { lineTokens } from "../tokenizer";
import { roundParts } from "../search";
import { parseSessionId } from "../session-id";
import { sessionExpiry } from "./sessions";
import { promptTerms } from "./terms";
import { blendTopic, nextTopic, parseTopic, serializeTopic } from "./topic";
import { parseProject } from "../search";
import type { Services } from "../services";
import { keywords } from "../text";
import { QUERY_MAX_CHARS } from "../search/tuning";

import { round3 } from "../memories";
import { RECALL_GIST_CHARS, RECALL_MIN_KEYWORDS, RECALL_MIN_PROMPT_CHARS, RECALL_SUPPRESS_TURNS } from "./tuning";

/** POST /recall-index body; `privacy` is accepted and ignored (deprecated). */
export type { RecallIndexInput as RecallInput } from "./schema";
import type { RecallIndexInput as RecallInput } from "./schema";

/** An index answer; `receipt` names its receipt (GET /recall/receipts) while receipts are on (the HTTP answer carries it inside `explain` only). */
export interface RecallAnswer {
  block: string | null;
  shown: string[];
  turn: number;
  receipt?: string;
}

export type RecallResult = Omit<RecallAnswer, "receipt"> | { block: null; skipped: "short-prompt" } | { ok: true; reset: true };

export interface RecallRequest {
  sessionId: string;
  prompt: string;
  project: string | null;
  agent?: string | null;
  /** Only the project's own memories compete (a project-scoped caller: project-less memories are in no scope). */
  projectOnly?: boolean;
}

/** Who asks: a project-scoped member (`scope` non-null) recalls within its project, under its own session names. */
export interface RecallCaller {
  scope: ProjectScope;
  /** The member's token name: its session ids are its own, so it never reads or resets another member's session. */
  member: string;
}

/** True when a prompt is too short to be about anything ("ok", "go on", "yes do it"). */
export function isShortPrompt(prompt: string): boolean {
  const text = prompt.trim();
  return text.length < RECALL_MIN_PROMPT_CHARS || new Set(keywords(text.slice(0, QUERY_MAX_CHARS))).size < RECALL_MIN_KEYWORDS;
}

/**
 * POST /recall-index: the per-prompt index of memories worth lazy-loading.
 * A project-scoped caller (the edge has filled in its project) recalls only
 * that project's memories, and its sessions are named apart from everyone
 * else's (their topic and suppression state are a member's own).
 */
export async function recallIndex(
  s: Services,
  input: RecallInput,
  opts: { explain?: boolean; caller?: RecallCaller } = {},
): Promise<RecallResult & { explain?: ReceiptView | null }> {
  const scoped = opts.caller && opts.caller.scope !== null ? opts.caller : null;
  const sessionId = scoped ? `@${scoped.member}/${parseSessionId(input.session_id)}` : parseSessionId(input.session_id);
  const agent = parseAgent(input.agent);
  if (input.reset !== undefined && input.reset !== null && typeof input.reset !== "boolean") throw invalid("reset must be true or false");
  const project = parseProject(input.project);
  // The edge checked it (scopedProject); a second line, since recalling without a project spans every project.
  if (scoped && (project === null || !inProjectScope(scoped.scope, project)))
    throw new AppError("forbidden", `token ${scoped.member} is scoped to other projects`);
  if (input.reset === true) {
    await resetSession(s, sessionId);
    return { ok: true, reset: true };
  }
  if (input.prompt === undefined || input.prompt === null) throw invalid("prompt is required (or reset: true to clear the session)");
  if (typeof input.prompt !== "string") throw invalid("prompt must be a string");
  const prompt = input.prompt.trim().slice(0, QUERY_MAX_CHARS);
  if (isShortPrompt(prompt) && !(await isFollowUp(s, sessionId, prompt))) {
    // Still a turn of the conversation: the suppression window counts it.
    const turn = await s.storage.recall.nextTurn(sessionId, s.now(), sessionExpiry(s));
    const receipt = receiptFor(s, { sessionId, prompt, project, agent }, turn, null, [], [], null);
    const out = { block: null, skipped: "short-prompt" as const };
    return opts.explain ? { ...out, explain: await explained(s, receipt) } : out;
  }
  const [vector] = await s.embedder.embed([prompt], "query");
  // The answer keeps the spec's shape; its receipt id goes out with explain=true only.
  const { receipt, ...out } = await recallWithVector(s, { sessionId, prompt, project, agent, projectOnly: scoped !== null }, vector);
  return opts.explain ? { ...out, explain: await explained(s, receipt ?? null) } : out;
}

/** explain=true: the receipt as GET /recall/receipts shows it (written first), or null when receipts are off. */
async function explained(s: Services, receipt: string | null): Promise<ReceiptView | null> {
  if (!receipt) return null;
  await flushReceipts(s);
  return receiptView(await getReceipt(s, receipt));
}

function parseAgent(value: unknown): string | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string") throw invalid("agent must be a string (the harness: claude-code, codex, gemini-cli, opencode...)");
  const a = value.trim().toLowerCase();
  if (a.length > 64 || !/^[a-z0-9][a-z0-9_.-]*$/.test(a)) throw invalid("agent must be a harness name: lower-case letters, digits, - _ . (at most 64)");
  return a;
}

/** The token budget for this request: the harness's own when config names one, else recall.maxTokens. */
export function tokenBudget(s: Services, agent: string | null | undefined): number {
  return (agent ? s.config.recall.maxTokensByHarness[agent] : undefined) ?? s.config.recall.maxTokens;
}

/**
 * A prompt of one keyword ("and the tests?") is about something when the
 * session already has a topic: it is recalled against that topic.
 */
async function isFollowUp(s: Services, sessionId: string, prompt: string): Promise<boolean> {
  if (prompt.length < RECALL_MIN_PROMPT_CHARS || keywords(prompt).length === 0) return false;
  return s.storage.recall.hasTopic(sessionId);
}

/**
 * The recall-index path once the prompt vector is known (the bench times
 * this). One read before the retrieval (what the session saw, its topic)
 * and one transaction after it, which counts the turn (an atomic upsert)
 * and claims the picks: a concurrent prompt of the session, on this server
 * or another, gets its own turn and never lists a memory the other claimed.
 */
export async function recallWithVector(s: Services, req: RecallRequest, vector: Float32Array): Promise<RecallAnswer> {
  // What the session saw and the prompt's word counts are independent reads: at once.
  const [{ suppressed, topic }, terms] = await Promise.all([s.storage.recall.peekTurn(req.sessionId, RECALL_SUPPRESS_TURNS), promptTerms(s, req.prompt)]);
  // The session's running topic informs the query, then takes this prompt in.
  const blend = blendTopic(s, parseTopic(s, topic), vector, terms);
  // The prompt's terms, weighed once: the gates reuse them.
  const selection = await recallSelection(s, req.prompt, vector, req.project, new Set(suppressed), blend, terms, req.projectOnly ?? false);
  const budget = tokenBudget(s, req.agent);
  const { fit, cut, tokens, texts } = withinBudget(selection.lines, req.project, budget);
  const { turn, claimed } = await s.storage.recall.finishTurn({
    sessionId: req.sessionId,
    now: s.now(),
    expiry: sessionExpiry(s),
    window: RECALL_SUPPRESS_TURNS,
    topic: serializeTopic(s, nextTopic(blend, vector, terms)),
    picks: fit.map((p) => p.id),
  });
  const shown = fit.filter((p) => claimed.includes(p.id));
  // A pick another prompt of the session claimed meanwhile was shown there: this one leaves it out.
  const dropped = [
    ...cut.map((c) => ({ candidate: c, reason: "budget" as const })),
    ...fit.filter((p) => !claimed.includes(p.id)).map((c) => ({ candidate: c, reason: "suppression" as const })),
    ...selection.dropped,
  ];
  const block = renderIndex(shown, texts);
  const receipt = receiptFor(
    s,
    req,
    turn,
    block,
    shown.map((c) => ({ c, tokens: tokens.get(c.id) })),
    dropped,
    budget,
  );
  const out: RecallAnswer = { block, shown: shown.map((p) => p.id), turn };
  if (receipt) out.receipt = receipt;
  return out;
}

/**
 * The lines that fit the token budget, best first. A line costs its own
 * tokens (with its newline); the heading and footer are paid once. The sum
 * is the block's count or a little more (a block's parts never count fewer
 * tokens than the block: each ends at a newline, where the tokenizer splits),
 * so the block never exceeds the budget. A block without room for its best
 * line is no block.
 */
export function withinBudget(
  lines: RecallCandidate[],
  project: string | null,
  budget: number,
): { fit: RecallCandidate[]; cut: RecallCandidate[]; tokens: Map<string, number>; texts: Map<string, string> } {
  const tokens = new Map<string, number>();
  const texts = new Map<string, string>();
  if (lines.length === 0) return { fit: [], cut: [], tokens, texts };
  let used = lineTokens(`${RECALL_HEADING}\n`) + lineTokens(`\n${RECALL_FOOTER}`);
  const fit: RecallCandidate[] = [];
  const cut: RecallCandidate[] = [];
  for (const c of lines) {
    const text = lineOf(c, project);
    const n = lineTokens(`${text}\n`);
    tokens.set(c.id, n);
    texts.set(c.id, text);
    if (used + n <= budget) {
      fit.push(c);
      used += n;
    } else cut.push(c);
  }
  return { fit, cut, tokens, texts };
}

/** Queues the receipt of one answer (null when receipts are off); its id goes back with the answer. */
function receiptFor(
  s: Services,
  req: RecallRequest,
  turn: number,
  block: string | null,
  shown: { c: RecallCandidate; tokens: number | undefined }[],
  dropped: { candidate: RecallCandidate; reason: ReceiptDrop["reason"] }[],
  budget: number | null,
): string | null {
  if (!s.config.recall.receipts) return null;
  const id = crypto.randomUUID();
  const near = dropped.sort((a, b) => b.candidate.score - a.candidate.score).slice(0, RECEIPT_DROPPED_MAX);
  recordReceipt(s, {
    id,
    at: s.now(),
    kind: "recall",
    via: "rest",
    sessionId: req.sessionId,
    turn,
    agent: req.agent ?? null,
    project: req.project,
    rawPrompt: req.prompt,
    // The block's exact count is taken when the receipt is written, off the prompt's path.
    ...(block === null ? { tokens: 0 } : { tokens: 0, countText: block }),
    budget,
    injected: shown.map(({ c, tokens }) => ({
      id: c.id,
      score: round3(c.score),
      parts: roundParts(c.parts),
      content: c.content,
      ...(tokens !== undefined ? { tokens } : {}),
    })),
    dropped: near.map(({ candidate: c, reason }) => ({ id: c.id, score: round3(c.score), parts: roundParts(c.parts), content: c.content, reason })),
  });
  return id;
}

/** Session start or compaction: the agent has forgotten what it was shown. */
export async function resetSession(s: Services, sessionId: string): Promise<void> {
  await s.storage.recall.resetSession(sessionId);
}

/** First meaningful line of a memory as one line of Markdown, identifiers kept verbatim (see inline-md.ts). */
export function gist(content: string, max = RECALL_GIST_CHARS): string {
  return inlineMarkdown(content, max);
}

export const RECALL_HEADING = "## Memory recall (auto)";

/** The block of these lines (texts: their rendered lines, from withinBudget), or null for none. */
export function renderIndex(lines: readonly RecallCandidate[], texts: ReadonlyMap<string, string>): string | null {
  return lines.length === 0 ? null : [RECALL_HEADING, ...lines.map((p) => texts.get(p.id)!), "", RECALL_FOOTER].join("\n");
}

const RECALL_FOOTER =
  "_Only an index: load a memory before relying on it (`memsvc_get` with the short id, or `GET /memory?id=<short id>`), then cite it as (memory <short id>, <date>, from <source_agent>)._";

function lineOf(p: RecallCandidate, project: string | null): string {
  const elsewhere = p.project !== project && p.project !== null ? ` (project ${p.project})` : "";
  // After the gist, on the same line: the agent reads the warning next to the claim.
  const outdated = p.stale ? ` (may be outdated: ${staleNote(p.stale)})` : "";
  return `- \`${p.id.slice(0, 8)}\` ${p.memoryType}, ${isoDate(p.createdAt)}${elsewhere}: ${gist(p.content)}${outdated}`;
}
