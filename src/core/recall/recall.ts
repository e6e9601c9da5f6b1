import { withStorage } from "../storage";
import { invalid } from "../../errors";
import { staleNote } from "../memories";
import { isoDate } from "../dates";
import { inlineMarkdown } from "../identity";
import { recallCandidates, type RecallCandidate } from "./gates";
import { expireRecallSessions } from "./sessions";
import { promptTerms } from "./terms";
import { blendTopic, loadTopic, nextTopic, saveTopic } from "./topic";
import { parseProject } from "../search";
import type { Services } from "../services";
import { keywords } from "../text";
import { QUERY_MAX_CHARS, RECALL_GIST_CHARS, RECALL_MIN_KEYWORDS, RECALL_MIN_PROMPT_CHARS, RECALL_SUPPRESS_TURNS } from "../tuning";

/** POST /recall-index body; `privacy` is accepted and ignored (deprecated). */
export interface RecallInput {
  session_id?: unknown;
  prompt?: unknown;
  reset?: unknown;
  project?: unknown;
  privacy?: unknown;
}

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
 * The prompt's embedding is the only await; the rest is one synchronous
 * transaction, so two prompts of one session cannot interleave.
 */
export async function recallIndex(s: Services, input: RecallInput | Record<string, unknown>): Promise<RecallResult> {
  const sessionId = parseSessionId(input.session_id);
  if (input.reset !== undefined && input.reset !== null && typeof input.reset !== "boolean") throw invalid("reset must be true or false");
  const project = parseProject(input.project);
  if (input.reset === true) {
    resetSession(s, sessionId);
    return { ok: true, reset: true };
  }
  if (input.prompt === undefined || input.prompt === null) throw invalid("prompt is required (or reset: true to clear the session)");
  if (typeof input.prompt !== "string") throw invalid("prompt must be a string");
  const prompt = input.prompt.trim().slice(0, QUERY_MAX_CHARS);
  if (isShortPrompt(prompt) && !isFollowUp(s, sessionId, prompt)) {
    // Still a turn of the conversation: the suppression window counts it.
    s.store.sqlite.transaction(() => nextTurn(s, sessionId))();
    return { block: null, skipped: "short-prompt" };
  }
  const [vector] = await s.embedder.embed([prompt], "query");
  return recallWithVector(s, { sessionId, prompt, project }, vector);
}

/**
 * A prompt of one keyword ("and the tests?") is about something when the
 * session already has a topic: it is recalled against that topic.
 */
function isFollowUp(s: Services, sessionId: string, prompt: string): boolean {
  if (prompt.length < RECALL_MIN_PROMPT_CHARS || keywords(prompt).length === 0) return false;
  return s.store.sqlite.query<{ n: number }, [string]>("SELECT count(*) AS n FROM recall_topics WHERE session_id = ?").get(sessionId)!.n > 0;
}

/** The synchronous part of recallIndex once the prompt vector is known (the bench times this). */
export function recallWithVector(s: Services, req: RecallRequest, vector: Float32Array): Promise<{ block: string | null; shown: string[]; turn: number }> {
  return s.storage.transaction(async (tx) => {
    const turn = nextTurn(s, req.sessionId);
    const suppressed = new Set(
      s.store.sqlite
        .query<{ memory_id: string }, [string, number]>("SELECT memory_id FROM recall_shown WHERE session_id = ? AND turn > ?")
        .all(req.sessionId, turn - RECALL_SUPPRESS_TURNS)
        .map((r) => r.memory_id),
    );
    // The session's running topic informs the query, then takes this prompt in.
    const terms = promptTerms(s, req.prompt);
    const blend = blendTopic(s, loadTopic(s, req.sessionId), vector, terms);
    const picks = await recallCandidates(withStorage(s, tx), req.prompt, vector, req.project, suppressed, blend);
    saveTopic(s, req.sessionId, nextTopic(blend, vector, terms));
    if (picks.length === 0) return { block: null, shown: [], turn };
    markShown(s, req.sessionId, turn, picks);
    return { block: renderBlock(picks, req.project), shown: picks.map((p) => p.id), turn };
  });
}

/**
 * Advances the session's turn counter (creating the session); call inside a
 * transaction. A new session is when old ones are expired: the table only
 * grows then, so it stays bounded without a timer.
 */
function nextTurn(s: Services, sessionId: string): number {
  const turn = s.store.sqlite
    .query<{ turn: number }, [string, number]>(
      `INSERT INTO recall_sessions(session_id, turn, updated_at) VALUES (?1, 1, ?2)
       ON CONFLICT(session_id) DO UPDATE SET turn = turn + 1, updated_at = ?2 RETURNING turn`,
    )
    .get(sessionId, s.now())!.turn;
  if (turn === 1) expireRecallSessions(s);
  return turn;
}

/**
 * Appearing in the index is a showing: counters, the decay clock and the
 * adoption history move together with the session state, in one transaction.
 */
function markShown(s: Services, sessionId: string, turn: number, picks: RecallCandidate[]): void {
  const now = s.now();
  const ids = JSON.stringify(picks.map((p) => p.id));
  s.store.sqlite.run(
    `INSERT INTO recall_shown(session_id, memory_id, turn) SELECT ?1, value, ?2 FROM json_each(?3) WHERE true
     ON CONFLICT(session_id, memory_id) DO UPDATE SET turn = excluded.turn`,
    [sessionId, turn, ids],
  );
  s.store.sqlite.run(
    `UPDATE memories SET shown_count = shown_count + 1, last_shown_at = ?1, refreshed_at = max(refreshed_at, ?1)
     WHERE id IN (SELECT value FROM json_each(?2))`,
    [now, ids],
  );
  s.store.sqlite.run("INSERT INTO memory_events(memory_id, kind, at) SELECT value, 'shown', ?1 FROM json_each(?2)", [now, ids]);
  // Rows past the window only cost space: drop them while we are here.
  s.store.sqlite.run("DELETE FROM recall_shown WHERE session_id = ? AND turn <= ?", [sessionId, turn - RECALL_SUPPRESS_TURNS]);
}

/** Session start or compaction: the agent has forgotten what it was shown. */
export function resetSession(s: Services, sessionId: string): void {
  s.store.sqlite.transaction(() => {
    s.store.sqlite.run("DELETE FROM recall_shown WHERE session_id = ?", [sessionId]);
    s.store.sqlite.run("DELETE FROM recall_sessions WHERE session_id = ?", [sessionId]);
  })();
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
