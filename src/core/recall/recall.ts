import { invalid } from "../../errors";
import { staleNote } from "../memories";
import { isoDate } from "../dates";
import { inlineMarkdown } from "../identity";
import { recallCandidates, type RecallCandidate } from "./gates";
import { sessionExpiry } from "./sessions";
import { promptTerms } from "./terms";
import { blendTopic, nextTopic, parseTopic, serializeTopic } from "./topic";
import { parseProject } from "../search";
import type { Services } from "../services";
import { keywords } from "../text";
import { QUERY_MAX_CHARS } from "../search/tuning";
import { RECALL_GIST_CHARS, RECALL_MIN_KEYWORDS, RECALL_MIN_PROMPT_CHARS, RECALL_SUPPRESS_TURNS } from "./tuning";

/** POST /recall-index body; `privacy` is accepted and ignored (deprecated). */
export type { RecallIndexInput as RecallInput } from "./schema";
import type { RecallIndexInput as RecallInput } from "./schema";

export type RecallResult =
  | { block: string | null; shown: string[]; turn: number }
  | { block: null; skipped: "short-prompt" }
  | { ok: true; reset: true };

interface RecallRequest {
  sessionId: string;
  prompt: string;
  project: string | null;
}

const MAX_SESSION_ID = 200;

function parseSessionId(value: unknown): string {
  if (value === undefined || value === null || value === "") throw invalid("session_id is required");
  if (typeof value !== "string") throw invalid("session_id must be a string");
  const id = value.trim();
  if (!id) throw invalid("session_id must not be blank");
  if (id.length > MAX_SESSION_ID) throw invalid(`session_id is longer than ${MAX_SESSION_ID} characters`);
  return id;
}

/** True when a prompt is too short to be about anything ("ok", "go on", "yes do it"). */
export function isShortPrompt(prompt: string): boolean {
  const text = prompt.trim();
  return text.length < RECALL_MIN_PROMPT_CHARS || new Set(keywords(text.slice(0, QUERY_MAX_CHARS))).size < RECALL_MIN_KEYWORDS;
}

/**
 * POST /recall-index: the per-prompt index of memories worth lazy-loading.
 */
export async function recallIndex(s: Services, input: RecallInput): Promise<RecallResult> {
  const sessionId = parseSessionId(input.session_id);
  if (input.reset !== undefined && input.reset !== null && typeof input.reset !== "boolean") throw invalid("reset must be true or false");
  const project = parseProject(input.project);
  if (input.reset === true) {
    await resetSession(s, sessionId);
    return { ok: true, reset: true };
  }
  if (input.prompt === undefined || input.prompt === null) throw invalid("prompt is required (or reset: true to clear the session)");
  if (typeof input.prompt !== "string") throw invalid("prompt must be a string");
  const prompt = input.prompt.trim().slice(0, QUERY_MAX_CHARS);
  if (isShortPrompt(prompt) && !(await isFollowUp(s, sessionId, prompt))) {
    // Still a turn of the conversation: the suppression window counts it.
    await s.storage.recall.nextTurn(sessionId, s.now(), sessionExpiry(s));
    return { block: null, skipped: "short-prompt" };
  }
  const [vector] = await s.embedder.embed([prompt], "query");
  return recallWithVector(s, { sessionId, prompt, project }, vector);
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
export async function recallWithVector(s: Services, req: RecallRequest, vector: Float32Array): Promise<{ block: string | null; shown: string[]; turn: number }> {
  const { suppressed, topic } = await s.storage.recall.peekTurn(req.sessionId, RECALL_SUPPRESS_TURNS);
  // The session's running topic informs the query, then takes this prompt in.
  const terms = await promptTerms(s, req.prompt);
  const blend = blendTopic(s, parseTopic(s, topic), vector, terms);
  // The prompt's terms, weighed once: the gates reuse them.
  const picks = await recallCandidates(s, req.prompt, vector, req.project, new Set(suppressed), blend, terms);
  const { turn, claimed } = await s.storage.recall.finishTurn({
    sessionId: req.sessionId,
    now: s.now(),
    expiry: sessionExpiry(s),
    window: RECALL_SUPPRESS_TURNS,
    topic: serializeTopic(s, nextTopic(blend, vector, terms)),
    picks: picks.map((p) => p.id),
  });
  const shown = picks.filter((p) => claimed.includes(p.id));
  if (shown.length === 0) return { block: null, shown: [], turn };
  return { block: renderBlock(shown, req.project), shown: shown.map((p) => p.id), turn };
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

function renderBlock(picks: RecallCandidate[], project: string | null): string {
  const lines = picks.map((p) => {
    const elsewhere = p.project !== project && p.project !== null ? ` (project ${p.project})` : "";
    // After the gist, on the same line: the agent reads the warning next to the claim.
    const outdated = p.stale ? ` (may be outdated: ${staleNote(p.stale)})` : "";
    return `- \`${p.id.slice(0, 8)}\` ${p.memoryType}, ${isoDate(p.createdAt)}${elsewhere}: ${gist(p.content)}${outdated}`;
  });
  return [
    RECALL_HEADING,
    ...lines,
    "",
    "_Only an index: load a memory before relying on it (`memsvc_get` with the short id, or `GET /memory?id=<short id>`), then cite it as (memory <short id>, <date>, from <source_agent>)._",
  ].join("\n");
}
