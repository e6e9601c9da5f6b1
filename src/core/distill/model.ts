import { AppError, unavailable } from "../../errors";
import type { LlmClient } from "../../llm/client";
import { distillMessages } from "../../llm/prompts";
import { normalizeMemoryType, type MemoryType } from "../memories";
import type { Services } from "../services";
import { redact } from "../secrets";
import type { Dropped } from "./substance";
import { thresholds } from "../search";
import { DISTILL_CONTEXT_MEMORIES, DISTILL_MAX_MEMORIES_PER_CHUNK } from "./tuning";
import { QUERY_MAX_CHARS } from "../search/tuning";

/** One memory as the model proposed it, before the substance gate. */
export interface Fragment {
  content: string;
  memoryType: MemoryType;
  tags: string[];
  /** `to`: index of another fragment of the same reply, or an existing memory's (short) id. */
  relationships: { to: number | string; type: string }[];
  /** Lines of the chunk the model quoted as what the memory rests on (checked against the chunk before use: see evidence.ts). */
  evidence: string[];
  /** Which chunk's reply it came from, and its index there (what the model's numeric `to` refers to). */
  chunk: number;
  index: number;
}

export interface ChunkContext {
  project: string | null;
  sessionDate: string;
}

export interface ModelOutput {
  fragments: Fragment[];
  dropped: Dropped[];
  /** Short id shown to the model -> full id, so its relationship targets resolve exactly. */
  shown: Map<string, string>;
  calls: number;
}

/**
 * Distils the chunks one after another. Any failed call fails the whole
 * request (strict: no partial result is stored; the client retries the
 * segment), with the client's message saying what went wrong.
 */
export async function distillChunks(s: Services, llm: LlmClient, chunks: readonly string[], ctx: ChunkContext): Promise<ModelOutput> {
  const out: ModelOutput = { fragments: [], dropped: [], shown: new Map(), calls: 0 };
  for (let i = 0; i < chunks.length; i++) {
    const existing = await relatedMemories(s, chunks[i], ctx.project);
    for (const e of existing) out.shown.set(e.shortId, e.id);
    const messages = distillMessages(chunks[i], { ...ctx, chunkIndex: i, chunkCount: chunks.length, existing });
    const reply = await callWithDeadline(llm, messages, s.config.llm.timeoutMs);
    out.calls++;
    const parsed = parseReply(reply, i, s);
    out.fragments.push(...parsed.fragments);
    out.dropped.push(...parsed.dropped);
  }
  return out;
}

/**
 * The client's own timeout covers connecting and the response headers; this
 * deadline also covers a server that sends headers and then stalls the body.
 */
export async function callWithDeadline(llm: LlmClient, messages: Parameters<LlmClient["chatJson"]>[0], timeoutMs: number): Promise<unknown> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    return await llm.chatJson(messages, { signal: controller.signal });
  } catch (e) {
    if (timedOut)
      throw unavailable(
        `the language model (${llm.label}) did not answer within ${Math.max(1, Math.round(timeoutMs / 1000))} s (llm.timeoutMs = ${timeoutMs})`,
      );
    if (e instanceof AppError) throw e;
    throw unavailable(`the language model call failed: ${(e as Error)?.message ?? String(e)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** Existing memories close to the chunk, offered to the model as link targets. */
async function relatedMemories(s: Services, chunk: string, project: string | null): Promise<{ id: string; shortId: string; content: string }[]> {
  if (s.index.size === 0) return [];
  const [vector] = await s.embedder.embed([chunk.slice(0, QUERY_MAX_CHARS)], "query");
  const floor = thresholds(s).distillContext;
  const hits = (await s.storage.search.nearest(vector, DISTILL_CONTEXT_MEMORIES, project)).filter((h) => h.similarity >= floor);
  if (hits.length === 0) return [];
  const rows = await s.storage.distill.memoriesBySeq(hits.map((h) => h.seq));
  const bySeq = new Map(rows.map((r) => [r.seq, r]));
  const out: { id: string; shortId: string; content: string }[] = [];
  for (const h of hits) {
    const r = bySeq.get(h.seq);
    // Memories stored before redaction covered every route may still hold a secret.
    if (r) out.push({ id: r.id, shortId: r.id.slice(0, 8), content: await redact(r.content) });
  }
  return out;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/**
 * Reads `{"memories": [...]}` leniently: a bare array, a string entry, `text`
 * instead of `content`, an unknown memory_type (stored as knowledge). A reply
 * with no list at all is a failed call.
 */
export function parseReply(reply: unknown, chunk: number, s?: Pick<Services, "log">): { fragments: Fragment[]; dropped: Dropped[] } {
  const list = Array.isArray(reply)
    ? reply
    : reply && typeof reply === "object" && Array.isArray((reply as Record<string, unknown>).memories)
      ? ((reply as Record<string, unknown>).memories as unknown[])
      : null;
  if (list === null) {
    const shape = reply && typeof reply === "object" ? `an object with keys ${Object.keys(reply).slice(0, 5).join(", ") || "(none)"}` : typeof reply;
    throw unavailable(`the language model answered JSON without a "memories" list (${shape})`);
  }
  if (list.length > DISTILL_MAX_MEMORIES_PER_CHUNK) {
    s?.log("warn", `distill: the model proposed ${list.length} memories for one chunk; keeping the first ${DISTILL_MAX_MEMORIES_PER_CHUNK}`);
  }
  const fragments: Fragment[] = [];
  const dropped: Dropped[] = [];
  list.slice(0, DISTILL_MAX_MEMORIES_PER_CHUNK).forEach((entry, index) => {
    const obj = entry && typeof entry === "object" && !Array.isArray(entry) ? (entry as Record<string, unknown>) : null;
    const content = str(entry) ?? str(obj?.content) ?? str(obj?.text) ?? str(obj?.memory);
    if (content === null) {
      dropped.push({ content: JSON.stringify(entry ?? null).slice(0, 200), reason: "not a memory" });
      return;
    }
    let memoryType: MemoryType = "knowledge";
    const rawType = obj?.memory_type ?? obj?.type;
    if (typeof rawType === "string") {
      try {
        memoryType = normalizeMemoryType(rawType);
      } catch {
        /* an unknown type is still a memory; knowledge is the neutral kind */
      }
    }
    fragments.push({
      content: content.trim(),
      memoryType,
      tags: readTags(obj?.tags),
      evidence: readEvidence(obj?.evidence),
      relationships: readRelationships(obj?.relationships ?? obj?.links),
      chunk,
      index,
    });
  });
  return { fragments, dropped };
}

function readTags(v: unknown): string[] {
  const raw = typeof v === "string" ? v.split(",") : Array.isArray(v) ? v : [];
  return raw.filter((t): t is string => typeof t === "string" && t.trim() !== "").slice(0, 8);
}

function readEvidence(v: unknown): string[] {
  const raw = typeof v === "string" ? v.split("\n") : Array.isArray(v) ? v : [];
  return raw.filter((t): t is string => typeof t === "string" && t.trim() !== "").slice(0, 8);
}

function readRelationships(v: unknown): Fragment["relationships"] {
  if (!Array.isArray(v)) return [];
  const out: Fragment["relationships"] = [];
  for (const r of v.slice(0, 16)) {
    if (!r || typeof r !== "object") continue;
    const o = r as Record<string, unknown>;
    const to = o.to ?? o.target ?? o.id;
    const type = str(o.type) ?? str(o.relationship) ?? "related";
    if (typeof to === "number" && Number.isInteger(to) && to >= 0) out.push({ to, type });
    else if (typeof to === "string" && /^\d{1,3}$/.test(to.trim())) out.push({ to: Number(to.trim()), type });
    else if (typeof to === "string" && /^[0-9a-f-]{8,36}$/i.test(to.trim())) out.push({ to: to.trim().toLowerCase(), type });
  }
  return out;
}
