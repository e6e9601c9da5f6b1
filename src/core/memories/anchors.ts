import { invalid } from "../../errors";
import { isoTime } from "../dates";
import type { Services } from "../services";
import type { ProjectScope } from "../scope";
import type { AnchorsInput, MarkStaleInput } from "./schema";
import type { AnchorRow } from "./store";
import { feedbackMarks } from "./feedback-marks";
import { ANCHOR_MAX_PATH_CHARS, ANCHOR_MAX_PATHS, STALE_NOTE_PATHS } from "./tuning";
import { counted, plural } from "../text";

/**
 * Anchors: the code a memory is about (repository, branch, commit, paths),
 * sent by capture with /distill (or by a client with /ingest), and the
 * staleness marks clients send after checking them against git. The server
 * never sees source code: only paths, commit ids and counts.
 */

/** An anchor as /distill and /ingest accept it (`anchors`). */
export interface AnchorInput {
  repo: string;
  branch: string | null;
  commit: string;
  paths: string[];
}

/** Why a memory may be outdated. */
export const STALE_REASONS = ["changed", "missing", "commit-unknown", "repo-deleted"] as const;
export type StaleReason = (typeof STALE_REASONS)[number];

export interface StaleMark {
  /** "reported": `outdated` feedback (a person or an agent said so), with its note. */
  reason: StaleReason | "reported";
  /** reported: what the feedback said. */
  note?: string;
  /** Anchored paths that differ between the anchor's commit and HEAD (deleted ones included). */
  changed_paths: string[];
  /** Anchored paths that no longer exist in the working tree. */
  missing_paths: string[];
  /** Commits since the anchor's commit that touched a changed path. */
  commits: number;
  /** Commit date (ISO) of the newest of them, or null. */
  last_change: string | null;
  /** The HEAD the client compared against, when it had one. */
  head: string | null;
  /** When the server received the mark (ISO). */
  checked_at: string;
}

export interface AnchorView {
  repo: string;
  branch: string | null;
  commit: string;
  paths: string[];
  anchored_at: string;
  stale?: StaleMark;
  /** When the nightly re-check confirmed the memory against `commit` (the commit its last mark was made at). */
  confirmed_at?: string;
}

const MAX_REPO_CHARS = 500;
const MAX_BRANCH_CHARS = 250;
const COMMIT = /^[0-9a-f]{7,64}$/;

/**
 * A repository-relative path, or a 400: no absolute path, no `..` segment,
 * no control characters. Backslashes become slashes, `./` segments go.
 */
export function normalizeAnchorPath(raw: unknown, where: string): string {
  if (typeof raw !== "string") throw invalid(`${where} must be a string`);
  if (raw.length > ANCHOR_MAX_PATH_CHARS) throw invalid(`${where} is longer than ${ANCHOR_MAX_PATH_CHARS} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw invalid(`${where} holds control characters`);
  const p = raw.replace(/\\/g, "/");
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) throw invalid(`${where} must be relative to the repository root, got ${JSON.stringify(raw)}`);
  const segments = p.split("/").filter((seg) => seg !== "" && seg !== ".");
  if (segments.includes("..")) throw invalid(`${where} must not contain "..", got ${JSON.stringify(raw)}`);
  if (segments.length === 0) throw invalid(`${where} is empty`);
  return segments.join("/");
}

const text = (v: unknown, where: string, max: number, required: boolean): string | null => {
  if (v === undefined || v === null || v === "") {
    if (required) throw invalid(`${where} is required`);
    return null;
  }
  if (typeof v !== "string") throw invalid(`${where} must be a string`);
  const t = v.trim();
  if (t.length > max) throw invalid(`${where} is longer than ${max} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(t)) throw invalid(`${where} holds control characters`);
  if (!t && required) throw invalid(`${where} is required`);
  return t || null;
};

/** The optional `anchors` field of /distill and /ingest: null when absent, else validated (400 naming the field). */
export function parseAnchors(v: unknown): AnchorInput | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "object" || Array.isArray(v)) throw invalid("anchors must be an object {repo, branch, commit, paths}");
  const a = v as Record<string, unknown>;
  const unknown = Object.keys(a).filter((k) => !["repo", "branch", "commit", "paths"].includes(k));
  if (unknown.length) throw invalid(`anchors: unknown ${plural(unknown.length, "field")} ${unknown.join(", ")}: the object is {repo, branch, commit, paths}`);
  const repo = text(a.repo, "anchors.repo", MAX_REPO_CHARS, true)!;
  // A URL with credentials must never be stored (capture strips them; a hand-made request may not).
  if (/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(repo)) throw invalid("anchors.repo must not carry credentials (user@ or user:token@ in the URL)");
  const branch = text(a.branch, "anchors.branch", MAX_BRANCH_CHARS, false);
  const commit = text(a.commit, "anchors.commit", 64, true)!.toLowerCase();
  if (!COMMIT.test(commit)) throw invalid("anchors.commit must be a git commit id (7 to 64 hex digits)");
  if (!Array.isArray(a.paths)) throw invalid("anchors.paths must be an array of repository-relative paths");
  if (a.paths.length === 0) throw invalid("anchors.paths must name at least one path");
  if (a.paths.length > ANCHOR_MAX_PATHS) throw invalid(`anchors.paths holds ${a.paths.length} paths; the limit is ${ANCHOR_MAX_PATHS}`);
  const paths = [...new Set(a.paths.map((p, i) => normalizeAnchorPath(p, `anchors.paths[${i}]`)))];
  return { repo, branch, commit, paths };
}

/**
 * Attaches the anchor to memories (inside the caller's transaction when `s`
 * is withStorage(s, tx)). A memory already anchored in the repository (a
 * merge into an older memory) moves to the new commit and keeps its older
 * paths after the new ones, within the bound; its stale mark goes, since the
 * session just worked on that code.
 */
export async function writeAnchors(s: Services, ids: readonly string[], a: AnchorInput, now: number, evidence?: ReadonlyMap<string, string>): Promise<void> {
  const unique = [...new Set(ids)];
  const earlier = await s.storage.memories.anchorPaths(unique, a.repo);
  await s.storage.memories.upsertAnchors(
    unique.map((memoryId) => ({
      memoryId,
      repo: a.repo,
      branch: a.branch,
      commit: a.commit,
      paths: [...new Set([...a.paths, ...(earlier.get(memoryId) ?? [])])].slice(0, ANCHOR_MAX_PATHS),
      anchoredAt: now,
      evidence: evidence?.get(memoryId) ?? null,
    })),
  );
}

const viewOf = (r: AnchorRow): AnchorView => {
  const v: AnchorView = { repo: r.repo, branch: r.branch, commit: r.commit, paths: r.paths, anchored_at: isoTime(r.anchoredAt) };
  if (r.stale) v.stale = r.stale;
  if (r.confirmedAt !== null) v.confirmed_at = isoTime(r.confirmedAt);
  return v;
};

/** Anchors of these memories, by memory id (memories without any are absent). */
export async function anchorsOf(s: Services, ids: readonly string[]): Promise<Map<string, AnchorView[]>> {
  const out = new Map<string, AnchorView[]>();
  if (ids.length === 0) return out;
  for (const r of await s.storage.memories.anchorsOf([...new Set(ids)])) out.set(r.memoryId, [...(out.get(r.memoryId) ?? []), viewOf(r)]);
  return out;
}

/** The stale mark of each marked memory (the first marked anchor's, else `outdated` feedback's), by memory id. */
export async function staleOf(s: Services, ids: readonly string[]): Promise<Map<string, StaleMark>> {
  const out = new Map<string, StaleMark>();
  if (ids.length === 0) return out;
  const [rows, marks] = await Promise.all([s.storage.memories.staleMarks([...new Set(ids)]), feedbackMarks(s)]);
  for (const r of rows) if (!out.has(r.memoryId)) out.set(r.memoryId, r.stale);
  if (marks.size > 0) {
    for (const id of ids) {
      const o = marks.get(id)?.outdated;
      if (o && !out.has(id)) out.set(id, reportedMark(o.at, o.note));
    }
  }
  return out;
}

/** `outdated` feedback as a stale mark. */
export function reportedMark(at: number, note: string | null): StaleMark {
  const m: StaleMark = { reason: "reported", changed_paths: [], missing_paths: [], commits: 0, last_change: null, head: null, checked_at: isoTime(at) };
  if (note) m.note = note;
  return m;
}

/** One line, no newline: `src/db.ts changed in 3 commits since`, `src/a.ts no longer exists`... */
export function staleNote(m: StaleMark): string {
  const name = (list: string[]) => {
    const shown = list.slice(0, STALE_NOTE_PATHS).join(", ");
    return list.length > STALE_NOTE_PATHS ? `${shown} and ${list.length - STALE_NOTE_PATHS} more` : shown;
  };
  switch (m.reason) {
    case "reported":
      return m.note ? `reported outdated: ${m.note}` : "reported outdated";
    case "repo-deleted":
      return "its repository is gone";
    case "commit-unknown":
      return "the repository was rewritten (its commit is unknown)";
    case "missing":
      return `${name(m.missing_paths)} no longer exist${m.missing_paths.length === 1 ? "s" : ""}`;
    case "changed":
      return `${name(m.changed_paths)} changed${m.commits > 0 ? ` in ${counted(m.commits, "commit")}` : ""} since`;
  }
}

/** GET /anchors?repo=: what a client needs to check this repository's anchors (no content); within a scope, its memories' only. */
export async function anchorsForRepo(
  s: Services,
  input: AnchorsInput,
  scope: ProjectScope = null,
): Promise<{ repo: string; count: number; anchors: { id: string; commit: string; paths: string[]; stale: boolean }[] }> {
  const repo = text(input.repo, "repo", MAX_REPO_CHARS, true)!;
  const anchors = (await s.storage.memories.repoAnchors(repo, scope)).map((r) => ({
    id: r.memoryId,
    commit: r.commit,
    paths: r.paths,
    stale: r.stale !== null,
  }));
  return { repo, count: anchors.length, anchors };
}

const MAX_MARKS = 10_000;

const count = (v: unknown, where: string): number => {
  if (v === undefined || v === null) return 0;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw invalid(`${where} must be a whole number >= 0`);
  return v;
};

const pathList = (v: unknown, where: string): string[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalid(`${where} must be an array of paths`);
  if (v.length > ANCHOR_MAX_PATHS) throw invalid(`${where} holds more than ${ANCHOR_MAX_PATHS} paths`);
  return [...new Set(v.map((p, i) => normalizeAnchorPath(p, `${where}[${i}]`)))];
};

/**
 * POST /memory/stale: `{repo, head?, marks: [{id, reason, changed_paths,
 * missing_paths, commits, last_change}], fresh: [id]}`. A mark replaces the
 * anchor's previous one; `fresh` clears marks (the files are as they were at
 * the anchor's commit again). Ids without an anchor in `repo` are counted as
 * unknown, not an error: a memory may have been deleted meanwhile. One
 * transaction: all or nothing.
 */
export async function markStale(s: Services, body: MarkStaleInput): Promise<{ repo: string; marked: number; cleared: number; unknown: number }> {
  // The shape (and unknown fields) are checked at the edge (schema.ts); what follows is meaning: trimming, commit ids, paths.
  const repo = text(body.repo, "repo", MAX_REPO_CHARS, true)!;
  const head = text(body.head, "head", 64, false)?.toLowerCase() ?? null;
  if (head !== null && !COMMIT.test(head)) throw invalid("head must be a git commit id (7 to 64 hex digits)");
  const marksIn = body.marks ?? [];
  const freshIn = body.fresh ?? [];
  if (!Array.isArray(marksIn)) throw invalid("marks must be an array");
  if (!Array.isArray(freshIn)) throw invalid("fresh must be an array of memory ids");
  if (marksIn.length + freshIn.length > MAX_MARKS) throw invalid(`at most ${MAX_MARKS} marks and fresh ids per request`);
  const checkedAt = isoTime(s.now());
  const marks = marksIn.map((raw, i) => {
    const where = `marks[${i}]`;
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw invalid(`${where} must be an object`);
    const m = raw as Record<string, unknown>; // typed at the edge; read as unknown so these checks stay a second line
    const id = text(m.id, `${where}.id`, 64, true)!;
    if (!(STALE_REASONS as readonly string[]).includes(m.reason as string)) throw invalid(`${where}.reason must be one of ${STALE_REASONS.join(", ")}`);
    let last: string | null = null;
    if (m.last_change !== undefined && m.last_change !== null) {
      if (typeof m.last_change !== "string" || !Number.isFinite(Date.parse(m.last_change))) throw invalid(`${where}.last_change must be an ISO date`);
      last = new Date(Date.parse(m.last_change)).toISOString();
    }
    const mark: StaleMark = {
      reason: m.reason as StaleReason,
      changed_paths: pathList(m.changed_paths, `${where}.changed_paths`),
      missing_paths: pathList(m.missing_paths, `${where}.missing_paths`),
      commits: count(m.commits, `${where}.commits`),
      last_change: last,
      head,
      checked_at: checkedAt,
    };
    if (mark.reason === "changed" && mark.changed_paths.length === 0) throw invalid(`${where}: reason "changed" needs changed_paths`);
    if (mark.reason === "missing" && mark.missing_paths.length === 0) throw invalid(`${where}: reason "missing" needs missing_paths`);
    return { id, mark };
  });
  const fresh = freshIn.map((v, i) => text(v, `fresh[${i}]`, 64, true)!);
  const now = s.now();
  return { repo, ...(await s.storage.memories.markStale(repo, marks, fresh, now)) };
}
