import { AppError, invalid, tooLarge, unavailable } from "../../errors";
import { parseAnchors, writeAnchors, type AnchorInput } from "../memories";
import { chunkBudget, chunkTranscript, type TranscriptMessage } from "../../llm/chunk";
import type { LlmClient } from "../../llm/client";
import { DISTILL_PROMPT_OVERHEAD, existingBlockChars } from "../../llm/prompts";
import { isoDate, parseSessionDate } from "../dates";
import { distillChunks, type Fragment } from "./model";
import { pickEvidence } from "./evidence";
import { planFragments, writePlan } from "./store-segments";
import { countSession } from "../memories";
// Straight from its file: memories/index.ts does not export it (yet).
import { liveIndex } from "../memories/memories";
import { redactSecrets } from "../secrets";
import type { Services } from "../services";
import { withStorage } from "../storage";
import { substanceGate, substanceReason, type Dropped } from "./substance";
import {
  DISTILL_ANSWER_SHARE,
  DISTILL_CONTEXT_MEMORIES,
  DISTILL_DROPPED_PREVIEW_CHARS,
  DISTILL_MAX_CHUNKS,
  DISTILL_MEMORY_MAX_CHARS,
  DISTILL_MIN_CHUNK_CHARS,
  DISTILL_TRIVIAL_TRANSCRIPT_CHARS,
} from "./tuning";

/** The operation's input (schema.ts); its meaning is checked by parseDistillInput. */
export type { DistillInput } from "./schema";
import type { DistillInput } from "./schema";

export type DistillResult = { skipped: true; existing_count: number } | { ids: string[]; distilled: number; dropped: Dropped[] };

interface DistillRequest {
  messages: TranscriptMessage[];
  sessionId: string | null;
  segmentKey: string | null;
  createdAt: number;
  project: string | null;
  sourceAgent: string;
  sourceAgentId: string | null;
  sourceDomain: string | null;
  anchors: AnchorInput | null;
  createdBy: string | null;
}

const field = (v: unknown, name: string, max: number): string | null => {
  if (v === undefined || v === null) return null;
  if (typeof v !== "string") throw invalid(`${name} must be a string`);
  const t = v.trim();
  if (t.length > max) throw invalid(`${name} is longer than ${max} characters`);
  return t || null;
};

/** Validates the body; every problem is a 400 naming the field. */
export function parseDistillInput(input: DistillInput, now: number): Omit<DistillRequest, "createdBy"> {
  const messages: TranscriptMessage[] = [];
  if (input.messages !== undefined && input.messages !== null) {
    if (!Array.isArray(input.messages)) throw invalid("messages must be an array of {role, content} objects");
    input.messages.forEach((m, i) => {
      if (!m || typeof m !== "object" || Array.isArray(m)) throw invalid(`messages[${i}] must be an object {role, content}`);
      const { role, content } = m as Record<string, unknown>;
      if (typeof role !== "string") throw invalid(`messages[${i}].role must be a string`);
      if (typeof content !== "string") throw invalid(`messages[${i}].content must be a string`);
      // Cut to 40 characters after redaction (in run): a cut secret would no longer match its pattern.
      messages.push({ role: role.slice(0, 2000), content });
    });
  }
  if (input.text !== undefined && input.text !== null) {
    if (typeof input.text !== "string") throw invalid("text must be a string");
    messages.push({ role: "", content: input.text });
  }
  if (input.messages == null && input.text == null) throw invalid("give the session as text (a string) or messages (an array of {role, content})");
  if (messages.every((m) => m.content.trim() === "")) throw invalid(input.text != null ? "text is empty" : "messages hold no content");
  const sessionId = field(input.session_id, "session_id", 500);
  const segmentId = field(input.segment_id, "segment_id", 200);
  if (segmentId && !sessionId) throw invalid("segment_id needs a session_id (the dedup key is <session_id>#<segment_id>)");
  return {
    messages,
    sessionId,
    segmentKey: segmentId ? `${sessionId}#${segmentId}` : null,
    createdAt: input.session_date === undefined || input.session_date === null ? now : parseSessionDate(input.session_date),
    project: field(input.project, "project", 200),
    sourceAgent: field(input.source_agent, "source_agent", 200) ?? "unknown",
    sourceAgentId: field(input.source_agent_id, "source_agent_id", 200),
    sourceDomain: field(input.source_domain, "source_domain", 200),
    anchors: parseAnchors(input.anchors),
  };
}

/**
 * A role names a speaker (user, assistant, tool_result, Claude Code). Anything
 * else (digits, symbols, a value) may be a bare password no rule recognises
 * without its context, so it is replaced whole.
 */
async function redactRole(raw: string): Promise<{ text: string; count: number }> {
  const role = raw.trim();
  if (role === "") return { text: "", count: 0 };
  if (!/^[A-Za-z][A-Za-z _.-]{0,39}$/.test(role) || (role.length >= 16 && /[a-z]/.test(role) && /[A-Z]/.test(role) && !role.includes(" "))) {
    return { text: "[REDACTED:role]", count: 1 };
  }
  return redactSecrets(role);
}

/**
 * Dedup rule 1 (segment-exact) or rule 2 (any memory of the session): the
 * count, or null. A read, so only an early answer: the segment key itself is
 * claimed by a unique key in the write's transaction (see run).
 */
async function dedupHit(s: Services, req: DistillRequest): Promise<number | null> {
  if (req.segmentKey) return s.storage.distill.segmentCount(req.segmentKey);
  if (req.sessionId) {
    const n = await countSession(s, req.sessionId);
    return n > 0 ? n : null;
  }
  return null;
}

// Per-server locks on dedup keys (s.state.distillLocks), so two posts of the same segment to
// one server run one after the other and the second is answered without a model call. Across
// servers the segment key's unique constraint decides (see run).
async function withKeyLock<T>(s: Services, key: string | null, work: () => Promise<T>): Promise<T> {
  if (key === null) return work();
  const map = s.state.distillLocks;
  const previous = map.get(key) ?? Promise.resolve();
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  const mine = previous.then(() => done);
  map.set(key, mine);
  await previous;
  try {
    return await work();
  } finally {
    release();
    if (map.get(key) === mine) map.delete(key);
  }
}

/**
 * POST /distill: redacts secrets, distils the transcript chunk by chunk with
 * the language model, gates the fragments for substance and stores the rest
 * (merging near-duplicates) in one transaction. The transcript itself is
 * never stored or logged.
 */
export async function distill(s: Services, input: DistillInput, llm: LlmClient | null, opts: { createdBy?: string | null } = {}): Promise<DistillResult> {
  const req = { ...parseDistillInput(input, s.now()), createdBy: opts.createdBy ?? null };
  const early = await dedupHit(s, req);
  if (early !== null) return { skipped: true, existing_count: early };
  if (!llm) {
    throw unavailable(
      "no language model is configured, so /distill cannot run: set llm.baseURL and llm.model in config.json (or MEMSVC_LLM_BASE_URL and MEMSVC_LLM_MODEL) and restart",
    );
  }
  const lockKey = req.segmentKey ?? (req.sessionId ? `session:${req.sessionId}` : null);
  try {
    return await s.track(withKeyLock(s, lockKey, () => run(s, req, llm)));
  } catch (e) {
    // The client gets the 503; the operator sees it too, one line, without the transcript.
    if (e instanceof AppError && e.code === "unavailable") s.log("warn", distillFailureLine(req, e.message));
    throw e;
  }
}

/**
 * "distill failed (session "abc", segment "0-812-9f2c"): <reason>". The reason
 * is the error's message less what could carry session text or a secret: the
 * quoted head of an unusable reply (the model may echo the transcript) and
 * any user:password@ in the model's URL.
 */
export function distillFailureLine(req: Pick<DistillRequest, "sessionId" | "segmentKey">, message: string): string {
  const quote = (v: string) => JSON.stringify(v.length > 100 ? `${v.slice(0, 100)}…` : v);
  const segment = req.segmentKey && req.sessionId ? req.segmentKey.slice(req.sessionId.length + 1) : null;
  const reason = message
    .replace(/: ".*"$/s, "")
    .replace(/\/\/[^/@\s]*@/g, "//")
    .replace(/\s+/g, " ")
    .slice(0, 300);
  return `distill failed (session ${req.sessionId ? quote(req.sessionId) : "none"}${segment ? `, segment ${quote(segment)}` : ""}): ${reason}`;
}

async function run(s: Services, req: DistillRequest, llm: LlmClient): Promise<DistillResult> {
  const started = s.now();
  // A concurrent post of the same key may have finished while we waited for the lock.
  const waited = await dedupHit(s, req);
  if (waited !== null) return { skipped: true, existing_count: waited };

  let secrets = 0;
  const clean: TranscriptMessage[] = [];
  for (const m of req.messages) {
    // The role is free text from the client and reaches the model as "role: content".
    const role = await redactRole(m.role);
    const content = await redactSecrets(m.content);
    secrets += role.count + content.count;
    clean.push({ role: role.text, content: content.text });
  }
  const inputChars = clean.reduce((n, m) => n + m.content.length, 0);
  const dropped: Dropped[] = [];
  let fragments: Fragment[] = [];
  let shown = new Map<string, string>();
  let calls = 0;
  let chunks: string[] = [];
  const whole = clean.map((m) => m.content).join("\n");
  const trivial = whole.length <= DISTILL_TRIVIAL_TRANSCRIPT_CHARS ? substanceReason(whole) : null;
  if (trivial) {
    dropped.push({ content: whole.trim(), reason: trivial });
  } else {
    const budget = chunkBudget(
      s.config.llm.contextChars,
      DISTILL_PROMPT_OVERHEAD + existingBlockChars(DISTILL_CONTEXT_MEMORIES),
      DISTILL_ANSWER_SHARE,
      DISTILL_MIN_CHUNK_CHARS,
    );
    chunks = chunkTranscript(clean, budget);
    if (chunks.length > DISTILL_MAX_CHUNKS) {
      throw tooLarge(
        `this transcript needs ${chunks.length} model calls of ${budget} characters; the limit is ${DISTILL_MAX_CHUNKS} per request: send it as several segments`,
      );
    }
    const out = await distillChunks(s, llm, chunks, { project: req.project, sessionDate: isoDate(req.createdAt) });
    ({ fragments, shown, calls } = out);
    // Entries the model sent that are no memory are kept as previews (table and log): redacted like memories.
    for (const d of out.dropped) {
      const r = await redactSecrets(d.content);
      secrets += r.count;
      dropped.push({ ...d, content: r.text });
    }
  }

  // The model may echo a secret it saw; memories are redacted again before the gate.
  const candidates: Fragment[] = [];
  for (const f of fragments) {
    const r = await redactSecrets(f.content);
    secrets += r.count;
    const content = r.text;
    if (content.length > DISTILL_MEMORY_MAX_CHARS) dropped.push({ content, reason: "too long" });
    else candidates.push({ ...f, content });
  }
  const gate = substanceGate(candidates);
  dropped.push(...gate.dropped);
  const plans = await planFragments(s, gate.kept, req.project);
  // Per kept fragment: its evidence excerpt from the (redacted) chunk it came from, for the nightly re-check.
  const evidence: (string | null)[] =
    req.anchors && s.config.distill.keepEvidence
      ? await Promise.all(gate.kept.map((f) => (chunks[f.chunk] ? pickEvidence(chunks[f.chunk], f.content, f.evidence ?? []) : null)))
      : [];

  const preview = dropped.map((d) => ({
    content: d.content.length > DISTILL_DROPPED_PREVIEW_CHARS ? `${d.content.slice(0, DISTILL_DROPPED_PREVIEW_CHARS)}…` : d.content,
    reason: d.reason,
  }));
  const outcome = await s.storage.transaction(async (tx) => {
    const ts = withStorage(s, tx);
    // Another server (or process) sharing the database may have stored this
    // segment while the model ran. The key is claimed first, by its unique
    // constraint: of two transactions claiming it at once exactly one wins and
    // writes; the other waits for it to commit, writes nothing, and answers
    // as a duplicate with the winner's count.
    if (req.segmentKey) {
      if (!(await tx.distill.claimSegment(req.segmentKey, req.sessionId!, s.now()))) {
        return { skipped: (await tx.distill.segmentCount(req.segmentKey)) ?? 0 } as const;
      }
    } else {
      const again = await dedupHit(ts, req);
      if (again !== null) return { skipped: again } as const;
    }
    const written = await writePlan(ts, gate.kept, plans, { ...req, sourceSession: req.sessionId }, shown);
    if (req.anchors) {
      // Several fragments may land in one memory: the first excerpt found is its evidence.
      const byId = new Map<string, string>();
      written.fragmentIds.forEach((id, i) => {
        if (id && evidence[i] && !byId.has(id)) byId.set(id, evidence[i]!);
      });
      await writeAnchors(ts, written.ids, req.anchors, s.now(), byId);
    }
    // Kept for the nightly log; a trivial transcript is raw session text and is not.
    if (!trivial) await tx.distill.recordDropped(s.now(), preview);
    if (req.segmentKey) await tx.distill.setSegmentCount(req.segmentKey, written.ids.length);
    return written;
  });
  if ("skipped" in outcome) return { skipped: true, existing_count: outcome.skipped };
  const index = liveIndex(s);
  if (index) for (const u of outcome.indexUpdates) index.upsert(u.seq, u.vector, req.project);

  s.log("info", "distilled", {
    session: req.sessionId,
    segment: req.segmentKey,
    input_chars: inputChars,
    secrets_redacted: secrets,
    model_calls: calls,
    fragments: fragments.length,
    stored: outcome.inserted,
    merged: outcome.merged,
    links: outcome.links,
    dropped: dropped.length,
    ms: s.now() - started,
  });
  // Dropped fragments are model output (or a trivial transcript), logged so the gate can be audited.
  for (const d of preview) if (!trivial) s.log("info", `distill dropped (${d.reason}): ${d.content.replace(/\s+/g, " ").slice(0, 160)}`);
  if (trivial) s.log("info", `distill skipped the model: the whole transcript is ${trivial} (${whole.length} chars)`);
  return { ids: outcome.ids, distilled: outcome.ids.length, dropped: preview };
}
