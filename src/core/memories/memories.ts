import { reloadMarks } from "./feedback-marks";
import { AppError, conflict, invalid, notFound } from "../../errors";
import { isoDate, isoTime } from "../dates";
import { normalizeMemoryType, type MemoryType } from "./types";
import type { Services } from "../services";
import { redact } from "../secrets";
import { effectiveStrength, round3, strengthenedOnUse } from "./strength";
import { currentSnapshot, recordVersion } from "./versions";
import { deriveTags, tagsOf, writeTags } from "./tags";
import { anchorsOf, type AnchorView } from "./anchors";
import { withStorage } from "../storage";
import type { MemoryRow } from "./store";
import { inProjectScope, type ProjectScope } from "../scope";

/** Longest memory content accepted; distilled memories are a few hundred characters. */
export const MAX_CONTENT_CHARS = 100_000;

/** The public shape of a memory (REST and MCP). */
export interface MemoryView {
  id: string;
  short_id: string;
  content: string;
  memory_type: string;
  project: string | null;
  source_agent: string;
  source_agent_id?: string;
  source_domain?: string;
  source_session?: string;
  created_at: string;
  updated_at: string;
  strength: number;
  effective_strength: number;
  connections: number;
  shown_count: number;
  used_count: number;
  last_shown_at: string | null;
  last_used_at: string | null;
  /** The code the memory is about, with any stale mark: GET /memory and memsvc_get only. */
  anchors?: AnchorView[];
  /** Only with GET /memory?evidence=true: the session lines kept for the nightly re-check, per repository. */
  evidence?: { repo: string; evidence: string }[];
}

export function toView(row: MemoryRow, now: number): MemoryView {
  const view: MemoryView = {
    id: row.id,
    short_id: row.id.slice(0, 8),
    content: row.content,
    memory_type: row.memoryType,
    project: row.project,
    source_agent: row.sourceAgent,
    created_at: isoTime(row.createdAt),
    updated_at: isoTime(row.updatedAt),
    strength: round3(row.strength),
    effective_strength: round3(effectiveStrength(row.strength, row.refreshedAt, now)),
    connections: row.linkCount,
    shown_count: row.shownCount,
    used_count: row.usedCount,
    last_shown_at: row.lastShownAt === null ? null : isoTime(row.lastShownAt),
    last_used_at: row.lastUsedAt === null ? null : isoTime(row.lastUsedAt),
  };
  if (row.sourceAgentId) view.source_agent_id = row.sourceAgentId;
  if (row.sourceDomain) view.source_domain = row.sourceDomain;
  if (row.sourceSession) view.source_session = row.sourceSession;
  return view;
}

export function citation(row: Pick<MemoryRow, "id" | "createdAt" | "sourceAgent">): string {
  return `(memory ${row.id.slice(0, 8)}, ${isoDate(row.createdAt)}, from ${row.sourceAgent})`;
}

export interface NewMemory {
  content: string;
  memoryType: MemoryType;
  project: string | null;
  sourceAgent: string;
  sourceAgentId?: string | null;
  sourceDomain?: string | null;
  sourceSession?: string | null;
  privacy?: string;
  createdAt: number;
  /** Domain tags named by the language model, strongest first. */
  tags?: readonly string[];
  /** The member (token name) whose request created it. */
  createdBy?: string | null;
}

/**
 * The vector index to keep in step after a commit: SQLite's in-memory
 * vectors, or on PostgreSQL the mirror, where pgvector already indexed the
 * row and only the memory count moves (word weights read it on the next
 * prompt: a count that lags the writes makes every word look common).
 */
export function liveIndex(s: Services): Services["index"] | null {
  return s.index;
}

/** A trimmed optional string of at most `max` characters (null when empty or absent). */
export const optionalString = (v: unknown, field: string, max = 200): string | null => {
  if (v === undefined || v === null) return null;
  if (typeof v !== "string") throw invalid(`${field} must be a string`);
  const t = v.trim();
  if (t.length > max) throw invalid(`${field} is longer than ${max} characters`);
  return t.length ? t : null;
};

export function requireContent(v: unknown, field = "content"): string {
  if (typeof v !== "string") throw invalid(`${field} is required and must be a string`);
  const t = v.trim();
  // Control and format characters alone (NUL, zero-width...) are no content either.
  if (!t.replace(/[\p{Cc}\p{Cf}\s]/gu, "")) throw invalid(`${field} must not be empty`);
  // Characters as JavaScript counts them (UTF-16 code units: an emoji counts 2); docs/api.md states the limit.
  if (t.length > MAX_CONTENT_CHARS) throw invalid(`${field} is ${t.length} characters; the limit is ${MAX_CONTENT_CHARS} characters per memory`);
  return t;
}

export function countSession(s: Services, session: string): Promise<number> {
  return s.storage.memories.countSession(session);
}

const FULL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Full UUID or a unique prefix of at least 8 characters; 400 / 404 / 409 otherwise. */
export async function resolveMemory(s: Services, rawId: unknown, field = "id"): Promise<MemoryRow> {
  if (rawId === undefined || rawId === null || rawId === "") throw invalid(`${field} is required`);
  if (typeof rawId !== "string") throw invalid(`${field} must be a string`);
  const id = rawId.trim().toLowerCase();
  if (FULL_ID.test(id)) {
    const row = await s.storage.memories.memoryById(id);
    if (!row) throw notFound(`no memory with id ${id}`);
    return row;
  }
  if (!/^[0-9a-f-]{8,36}$/.test(id)) throw invalid(`${field} must be a memory UUID or its first 8 (or more) characters`);
  const rows = await s.storage.memories.memoriesByIdPrefix(id, 11);
  if (rows.length === 0) throw notFound(`no memory with id prefix ${id}`);
  if (rows.length > 1) {
    throw conflict(`id prefix ${id} matches several memories; use more characters or the full id`, {
      candidates: rows.slice(0, 10).map((r) => ({ id: r.id, preview: r.content.slice(0, 80) })),
    });
  }
  return rows[0];
}

/**
 * resolveMemory for a caller limited to `scope`: a memory outside it is the
 * same 404, word for word, as an unknown id, and an ambiguous prefix names no
 * candidates (they could be other projects' memories). Unscoped: resolveMemory.
 */
export async function resolveInScope(s: Services, rawId: unknown, scope: ProjectScope, field = "id"): Promise<MemoryRow> {
  if (scope === null) return resolveMemory(s, rawId, field);
  let row: MemoryRow;
  try {
    row = await resolveMemory(s, rawId, field);
  } catch (e) {
    if (e instanceof AppError && e.code === "conflict") throw conflict("id prefix matches several memories; use more characters or the full id");
    throw e;
  }
  if (inProjectScope(scope, row.project)) return row;
  const id = (rawId as string).trim().toLowerCase();
  throw notFound(FULL_ID.test(id) ? `no memory with id ${id}` : `no memory with id prefix ${id}`);
}

/** GET /memory and memsvc_get: the memory, its citation; marks it used and strengthens it. */
export async function fetchMemory(s: Services, rawId: unknown, opts: { evidence?: unknown } = {}): Promise<{ memory: MemoryView; citation: string }> {
  const withEvidence = parseFlag(opts.evidence, "evidence");
  const row = await resolveMemory(s, rawId);
  const now = s.now();
  const updated = await s.storage.memories.markUsed(row.id, now, strengthenedOnUse(row.strength));
  if (!updated) throw notFound(`no memory with id ${row.id}`);
  const memory = toView(updated, now);
  const anchors = (await anchorsOf(s, [row.id])).get(row.id);
  if (anchors) memory.anchors = anchors;
  if (withEvidence) memory.evidence = await s.storage.memories.evidenceOf(row.id);
  return { memory, citation: citation(updated) };
}

/** An optional true/false query flag ("true", "1", "false", "0"), else a 400 naming it. */
function parseFlag(v: unknown, name: string): boolean {
  if (v === undefined || v === null || v === false || v === "" || v === "false" || v === "0") return false;
  if (v === true || v === "true" || v === "1") return true;
  throw invalid(`${name} must be true or false`);
}

/** PATCH /memory and memsvc_update (schema.ts); restore and the nightly re-check pass the same shape. */
export type { UpdateInput } from "./schema";
import type { UpdateInput } from "./schema";

export interface UpdateResult {
  memory: MemoryView;
  changes: Record<string, { before: string | null; after: string | null }>;
}

/**
 * PATCH /memory and memsvc_update: changed fields before/after; content
 * changes re-embed. What a change replaces is kept as a version (history.ts),
 * in the same transaction.
 */
export async function updateMemory(
  s: Services,
  input: UpdateInput,
  reason: "update" | "restore" | "recheck" = "update",
  /** More writes that belong to the change (the nightly re-check settles the anchors), inside its transaction. */
  within?: (ts: Services) => Promise<void>,
): Promise<UpdateResult> {
  const row = await resolveMemory(s, input.id);
  const next: { content?: string; project?: string | null; memoryType?: string } = {};
  if (input.content !== undefined) next.content = await redact(requireContent(input.content));
  if (input.project !== undefined) next.project = input.project === null ? null : optionalString(input.project, "project");
  if (input.memory_type !== undefined) next.memoryType = normalizeMemoryType(input.memory_type);
  if (Object.keys(next).length === 0) throw invalid("nothing to update: give content, project or memory_type");
  const changes: UpdateResult["changes"] = {};
  if (next.content !== undefined && next.content !== row.content) changes.content = { before: row.content, after: next.content };
  if (next.project !== undefined && next.project !== row.project) changes.project = { before: row.project, after: next.project };
  if (next.memoryType !== undefined && next.memoryType !== row.memoryType) changes.memory_type = { before: row.memoryType, after: next.memoryType };
  return s.track(
    (async () => {
      const vector = changes.content ? (await s.embedder.embed([next.content!], "document"))[0] : null;
      const now = s.now();
      const updated = await s.storage.transaction(async (tx) => {
        const ts = withStorage(s, tx);
        // Read again inside the transaction: another update may have committed while we embedded.
        const prior = Object.keys(changes).length ? await currentSnapshot(ts, row.id) : null;
        if (prior) await recordVersion(ts, row.id, prior, reason, null, now);
        const r = await tx.memories.updateMemory(row.id, { ...next, updatedAt: Object.keys(changes).length ? now : row.updatedAt });
        if (!r) throw notFound(`memory ${row.id} was deleted meanwhile`);
        if (vector) await tx.memories.setVector(r.seq, vector);
        if (changes.project) {
          // The project is the strongest domain tag; keep the others.
          const others =
            (await tagsOf(ts, [r.id]))
              .get(r.id)
              ?.map((t) => t.tag)
              .filter((t) => t !== row.project) ?? [];
          await writeTags(ts, r.id, deriveTags(r.project, others));
        }
        if (within) await within(ts);
        return r;
      });
      if (vector) liveIndex(s)?.upsert(updated.seq, vector, updated.project);
      else if (changes.project) liveIndex(s)?.regroup(updated.seq, updated.project);
      // A rewrite or restore settles wrong/outdated/irrelevant feedback: recall sees it at once.
      if (Object.keys(changes).length) await reloadMarks(s);
      return { memory: toView(updated, now), changes };
    })(),
  );
}

/** DELETE /memory and memsvc_delete: the memory, its vector, FTS row and links, at once. */
export async function deleteMemory(s: Services, id: string): Promise<{ deleted: true; id: string; preview: string; links_removed: number }> {
  const row = await resolveMemory(s, id);
  const linksRemoved = await deleteRows(s, [row]);
  liveIndex(s)?.remove(row.seq);
  return { deleted: true, id: row.id, preview: row.content.length > 200 ? `${row.content.slice(0, 200)}…` : row.content, links_removed: linksRemoved };
}

/**
 * Deletes memories (in one transaction; inside the caller's when `s` is
 * withStorage(s, tx)); returns the links removed. Links, tags, anchors,
 * versions, the full-text row and the vector go with each. The caller removes
 * the seqs from the in-memory index after commit.
 */
export function deleteRows(s: Services, rows: readonly { id: string }[]): Promise<number> {
  return s.storage.memories.deleteMemories(rows.map((r) => r.id));
}

export async function rowsBySeq(s: Services, seqs: number[]): Promise<Map<number, MemoryRow>> {
  const out = new Map<number, MemoryRow>();
  if (seqs.length === 0) return out;
  for (const r of await s.storage.memories.memoriesBySeq(seqs)) out.set(r.seq, r);
  return out;
}
