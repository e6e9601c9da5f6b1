import { invalid, notFound } from "../../errors";
import { isoTime } from "../dates";
import { parseLimit, parseProject } from "../search";
import type { Services } from "../services";
import { RECEIPT_PAGE_DEFAULT, RECEIPT_PAGE_MAX } from "./tuning";
import type { ReceiptKind, ReceiptMemory, ReceiptRow, ScoreParts, SessionSummary } from "./types";
import { flushReceipts } from "./writer";

export interface ReceiptMemoryView {
  id: string;
  short_id: string;
  score: number;
  parts: ScoreParts;
  gist: string;
  tokens?: number;
}

/** A receipt as GET /recall/receipts and `explain=true` answer it. */
export interface ReceiptView {
  id: string;
  at: string;
  kind: ReceiptKind;
  via: string;
  session_id: string | null;
  turn: number | null;
  agent: string | null;
  project: string | null;
  /** Redacted and bounded; null when config keeps only prompt_hash. */
  prompt: string | null;
  prompt_hash: string;
  tokens: number;
  budget: number | null;
  injected: (ReceiptMemoryView & { used: boolean })[];
  dropped: (ReceiptMemoryView & { reason: string })[];
}

const memoryView = (m: ReceiptMemory): ReceiptMemoryView => ({
  id: m.id,
  short_id: m.id.slice(0, 8),
  score: m.score,
  parts: m.parts,
  gist: m.gist,
  ...(m.tokens !== undefined ? { tokens: m.tokens } : {}),
});

export function receiptView(r: Omit<ReceiptRow, "prompt" | "promptHash"> & { prompt: string | null; promptHash: string }): ReceiptView {
  const used = new Set(r.used);
  return {
    id: r.id,
    at: isoTime(r.at),
    kind: r.kind,
    via: r.via,
    session_id: r.sessionId,
    turn: r.turn,
    agent: r.agent,
    project: r.project,
    prompt: r.prompt,
    prompt_hash: r.promptHash,
    tokens: r.tokens,
    budget: r.budget,
    injected: r.injected.map((m) => ({ ...memoryView(m), used: used.has(m.id) })),
    dropped: r.dropped.map((d) => ({ ...memoryView(d), reason: d.reason })),
  };
}

const text = (v: unknown, field: string, max = 200): string | null => {
  if (v === undefined || v === null || v === "") return null;
  if (typeof v !== "string") throw invalid(`${field} must be a string`);
  if (v.length > max) throw invalid(`${field} is longer than ${max} characters`);
  return v.trim() || null;
};

/** `before` of a page: the `next` value of the previous one ("<ms>.<id>"). */
function parseCursor(v: unknown): { at: number; id: string } | null {
  const c = text(v, "before", 100);
  if (c === null) return null;
  const m = /^(\d{1,15})\.([0-9a-f-]{1,64})$/.exec(c);
  if (!m) throw invalid('before must be the "next" value of an earlier page');
  return { at: Number(m[1]), id: m[2] };
}

export interface ReceiptQuery {
  session_id?: unknown;
  agent?: unknown;
  project?: unknown;
  kind?: unknown;
  memory?: unknown;
  before?: unknown;
  limit?: unknown;
}

/** GET /recall/receipts and `memsvc why`: newest first, filtered, paged with `before`. */
export async function listReceipts(s: Services, q: ReceiptQuery): Promise<{ receipts: ReceiptView[]; next: string | null }> {
  const kind = text(q.kind, "kind");
  if (kind !== null && kind !== "recall" && kind !== "search") throw invalid(`kind must be recall or search, got "${kind}"`);
  const memory = text(q.memory, "memory", 64)?.toLowerCase() ?? null;
  if (memory !== null && !/^[0-9a-f-]{8,36}$/.test(memory)) throw invalid("memory must be a memory id or its first 8 (or more) characters");
  const limit = parseLimit(q.limit, RECEIPT_PAGE_DEFAULT, RECEIPT_PAGE_MAX);
  await flushReceipts(s);
  const rows = await s.storage.receipts.listReceipts({
    sessionId: text(q.session_id, "session_id"),
    agent: text(q.agent, "agent"),
    project: parseProject(q.project),
    kind: kind as ReceiptKind | null,
    memoryId: memory,
    before: parseCursor(q.before),
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { receipts: page.map(receiptView), next: rows.length > limit && last ? `${last.at}.${last.id}` : null };
}

export async function getReceipt(s: Services, id: unknown): Promise<ReceiptRow> {
  const rid = text(id, "receipt", 64);
  if (rid === null) throw invalid("receipt is required (the `receipt` of a /recall-index answer, or an id from GET /recall/receipts)");
  await flushReceipts(s);
  const r = await s.storage.receipts.receipt(rid);
  if (!r) throw notFound(`no receipt ${rid} (receipts are kept ${s.config.recall.receiptDays} days, at most ${s.config.recall.receiptMax})`);
  return r;
}

export interface SessionView {
  session_id: string;
  agent: string | null;
  project: string | null;
  first_at: string;
  last_at: string;
  prompts: number;
  tokens: number;
  injected: number;
  used: number;
}

const sessionView = (x: SessionSummary): SessionView => ({
  session_id: x.sessionId,
  agent: x.agent,
  project: x.project,
  first_at: isoTime(x.firstAt),
  last_at: isoTime(x.lastAt),
  prompts: x.prompts,
  tokens: x.tokens,
  injected: x.injected,
  used: x.used,
});

/** GET /recall/sessions: sessions with recall receipts, most recently active first. */
export async function listSessions(s: Services, q: { limit?: unknown; before?: unknown }): Promise<{ sessions: SessionView[]; next: string | null }> {
  const limit = parseLimit(q.limit, 50, RECEIPT_PAGE_MAX);
  const b = text(q.before, "before", 20);
  if (b !== null && !/^\d{1,15}$/.test(b)) throw invalid('before must be the "next" value of an earlier page');
  await flushReceipts(s);
  const rows = await s.storage.receipts.sessions(limit + 1, b === null ? null : Number(b));
  const page = rows.slice(0, limit);
  return { sessions: page.map(sessionView), next: rows.length > limit && page.length ? String(page.at(-1)!.lastAt) : null };
}
