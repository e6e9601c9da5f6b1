import { conflict, invalid } from "../../errors";
import type { BrowseDeleteInput, BrowseListInput } from "../memories/schema";
import { isoTime, parseSessionDate } from "../dates";
import { currentMarks, feedbackMarks, needsReview, normalizeMemoryType, normalizeTag, round3, type MemoryMarks } from "../memories";
import { parseQuery, queryVector, rank } from "../search";
import type { ProjectScope } from "../scope";
import type { Services } from "../services";
import type { ListFilterSpec, ListRow } from "../memories/store-bulk";
import { LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT, LIST_PREVIEW_CHARS, LIST_SEARCH_POOL } from "../memories/tuning";
import { counted } from "../text";

/**
 * The memory browser's listing (GET /memories/list, POST /memories/delete):
 * filters, three sort orders and keyset paging. REST calls it; MCP could.
 */

export type ListSort = "relevance" | "importance" | "newest";

/** The storage filters plus the search query (ranked by search, then filtered by storage). */
export interface ListFilters extends ListFilterSpec {
  query: string | null;
  /** review=1: only memories needing review (wrong or outdated by feedback, unsettled, not retired); core turns it into `ids`. */
  review: boolean;
}

/** The browser's filters and page (schema.ts: BrowseListInput; a count's filters are a part of it). */
export type ListInput = BrowseListInput;

export interface ListItem {
  id: string;
  short_id: string;
  preview: string;
  memory_type: string;
  project: string | null;
  domain: string;
  source_agent: string;
  created_at: string;
  strength: number;
  effective_strength: number;
  shown_count: number;
  used_count: number;
  connections: number;
  /** Feedback in force (absent when none): wrong and outdated want a review; retired is out of recall and search. */
  marks?: ("wrong" | "outdated" | "retired")[];
  /** Search score (only when a query is given). */
  score?: number;
}

export interface ListResult {
  items: ListItem[];
  /** Memories matching the filters; only on the first page (no cursor), where it is worth its cost. */
  total?: number;
  sort: ListSort;
  /** Pass back as `cursor` for the next page; null on the last one. */
  next_cursor: string | null;
}

const str = (v: unknown, field: string, max = 200): string | null => {
  if (v === undefined || v === null || v === "") return null;
  if (typeof v !== "string") throw invalid(`${field} must be a string`);
  if (v.length > max) throw invalid(`${field} is longer than ${max} characters`);
  return v.trim() || null;
};

/** A date (YYYY-MM-DD, start of that day UTC) or a full ISO time. `endOfDay` makes a bare `to` date inclusive. */
function parseBound(v: unknown, field: string, endOfDay: boolean): number | null {
  const s = str(v, field, 40);
  if (s === null) return null;
  const ms = parseSessionDate(s, field);
  return endOfDay && /^\d{4}-\d{2}-\d{2}$/.test(s) ? ms + 86_400_000 - 1 : ms;
}

const FILTER_KEYS = ["query", "project", "type", "domain", "from", "to", "min_strength", "usage", "review"];

/** A misspelt filter must not widen a selection (a bulk delete above all): unknown names are refused. */
function rejectUnknown(input: object, allowed: readonly string[]): void {
  const extra = Object.keys(input).filter((k) => !allowed.includes(k));
  if (extra.length)
    throw invalid(
      `unknown parameter ${extra
        .slice(0, 3)
        .map((k) => JSON.stringify(k.slice(0, 40)))
        .join(", ")}; accepted: ${allowed.join(", ")}`,
    );
}

/** A query's filters (text) or a delete body's (min_strength a number). */
export function parseFilters(input: ListInput | BrowseDeleteInput): ListFilters {
  const query = input.query === undefined || input.query === null || input.query === "" ? null : parseQuery(input.query);
  const type = str(input.type, "type", 40);
  const domainRaw = str(input.domain, "domain", 100);
  const domain = domainRaw === null ? null : normalizeTag(domainRaw);
  if (domainRaw !== null && !domain) throw invalid(`domain must contain a letter or digit, got "${domainRaw.slice(0, 40)}"`);
  const from = parseBound(input.from, "from", false);
  const to = parseBound(input.to, "to", true);
  if (from !== null && to !== null && from > to) throw invalid("from is after to");
  let minStrength: number | null = null;
  if (input.min_strength !== undefined && input.min_strength !== null && input.min_strength !== "") {
    const n = typeof input.min_strength === "number" ? input.min_strength : Number(String(input.min_strength).trim() || Number.NaN);
    if (!Number.isFinite(n) || n < 0) throw invalid(`min_strength must be a number >= 0, got "${String(input.min_strength).slice(0, 40)}"`);
    minStrength = n;
  }
  const usage = str(input.usage, "usage", 10);
  if (usage !== null && usage !== "never" && usage !== "shown" && usage !== "used") throw invalid(`usage must be never, shown or used, got "${usage}"`);
  const review = str(input.review, "review", 1);
  if (review !== null && review !== "0" && review !== "1") throw invalid(`review must be 1 or 0, got "${review}"`);
  return {
    query,
    project: str(input.project, "project"),
    type: type === null ? null : normalizeMemoryType(type, "type"),
    domain,
    from,
    to,
    minStrength,
    usage,
    review: review === "1",
    ids: null,
  };
}

/**
 * The feedback marks the list needs, and the review filter as an id set.
 * With review=1 the marks are read afresh (exact, as a bulk delete of the
 * selection must be); otherwise the badges come from recall's cache.
 */
async function applyMarks(s: Services, f: ListFilters): Promise<Map<string, MemoryMarks>> {
  if (!f.review) return feedbackMarks(s);
  const marks = await currentMarks(s);
  f.ids = [...marks].filter(([, m]) => needsReview(m)).map(([id]) => id);
  return marks;
}

function parseSort(v: unknown, hasQuery: boolean): ListSort {
  const s = str(v, "sort", 20);
  if (s === null) return hasQuery ? "relevance" : "newest";
  if (s !== "relevance" && s !== "importance" && s !== "newest") throw invalid(`sort must be relevance, importance or newest, got "${s}"`);
  if (s === "relevance" && !hasQuery) throw invalid("sort=relevance needs a query");
  return s;
}

function parseListLimit(v: unknown): number {
  if (v === undefined || v === null || v === "") return LIST_DEFAULT_LIMIT;
  const n = typeof v === "number" ? v : /^\s*\d+\s*$/.test(String(v)) ? Number(v) : Number.NaN;
  if (!Number.isInteger(n) || n < 1) throw invalid("limit must be a positive integer");
  return Math.min(n, LIST_MAX_LIMIT);
}

/** The cursor is the sort key of the last row shown plus its seq (the tie-break), base64url JSON. */
interface Cursor {
  k: number;
  seq: number;
}
const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify([c.k, c.seq])).toString("base64url");
function decodeCursor(v: unknown): Cursor | null {
  const s = str(v, "cursor", 200);
  if (s === null) return null;
  try {
    const parsed = JSON.parse(Buffer.from(s, "base64url").toString("utf8"));
    if (Array.isArray(parsed) && parsed.length === 2 && Number.isFinite(parsed[0]) && Number.isInteger(parsed[1])) return { k: parsed[0], seq: parsed[1] };
  } catch {
    /* reported below */
  }
  throw invalid("cursor is not one this server gave out (pass next_cursor back unchanged)");
}

interface Row extends ListRow {}

function toItem(r: Row, marks: Map<string, MemoryMarks>, score?: number): ListItem {
  const flat = r.head.replace(/\s+/g, " ").trim();
  const item: ListItem = {
    id: r.id,
    short_id: r.id.slice(0, 8),
    preview: r.length > LIST_PREVIEW_CHARS ? `${flat}…` : flat,
    memory_type: r.memoryType,
    project: r.project,
    domain: r.domain,
    source_agent: r.sourceAgent,
    created_at: isoTime(r.createdAt),
    strength: round3(r.strength),
    effective_strength: round3(r.effectiveStrength),
    shown_count: r.shownCount,
    used_count: r.usedCount,
    connections: r.linkCount,
  };
  const m = marks.get(r.id);
  const flags = m ? (["wrong", "outdated", "retired"] as const).filter((k) => m[k]) : [];
  if (flags.length) item.marks = flags;
  if (score !== undefined) item.score = score;
  return item;
}

/**
 * The query's search hits that pass the filters, best first. Search ranks a
 * bounded pool (the retrievers' candidates widened by the graph), so this
 * list is short and held in memory; paging walks it by (score, seq) keys.
 */
async function searchMatches(s: Services, f: ListFilters, now: number): Promise<{ seq: number; score: number }[]> {
  const vector = await queryVector(s, f.query!);
  const hits = (await rank(s, f.query!, vector, LIST_SEARCH_POOL, f.project)).results;
  if (hits.length === 0) return [];
  const seqById = new Map(
    (
      await s.storage.memories.filterIds(
        hits.map((h) => h.id),
        f,
        now,
      )
    ).map((r) => [r.id, r.seq]),
  );
  const out: { seq: number; score: number }[] = [];
  for (const h of hits) {
    const seq = seqById.get(h.id);
    if (seq !== undefined) out.push({ seq, score: h.score });
  }
  return out;
}

async function rowsOf(s: Services, seqs: number[], now: number): Promise<Map<number, Row>> {
  const rows = await s.storage.memories.listRows(seqs, now, LIST_PREVIEW_CHARS);
  return new Map(rows.map((r) => [r.seq, r]));
}

/** GET /memories/list: one page of the filtered, sorted listing. */
export async function listMemories(s: Services, input: ListInput): Promise<ListResult> {
  rejectUnknown(input, [...FILTER_KEYS, "sort", "cursor", "limit"]);
  const f = parseFilters(input);
  const sort = parseSort(input.sort, f.query !== null);
  const marks = await applyMarks(s, f);
  const limit = parseListLimit(input.limit);
  const cursor = decodeCursor(input.cursor);
  const now = s.now();

  if (f.query !== null) {
    let matches = await searchMatches(s, f, now);
    if (sort !== "relevance") {
      const rows = await rowsOf(
        s,
        matches.map((m) => m.seq),
        now,
      );
      const key = (seq: number) => (sort === "newest" ? rows.get(seq)!.createdAt : rows.get(seq)!.strength);
      matches = matches
        .filter((m) => rows.has(m.seq))
        .map((m) => ({ seq: m.seq, score: m.score, k: key(m.seq) }))
        .sort((a, b) => b.k - a.k || b.seq - a.seq);
    }
    const keyOf = (m: { seq: number; score: number; k?: number }) => (sort === "relevance" ? m.score : m.k!);
    const start = cursor ? matches.findIndex((m) => keyOf(m) < cursor.k || (keyOf(m) === cursor.k && m.seq < cursor.seq)) : 0;
    const page = start < 0 ? [] : matches.slice(start, start + limit);
    const rows = await rowsOf(
      s,
      page.map((m) => m.seq),
      now,
    );
    const items = page.filter((m) => rows.has(m.seq)).map((m) => toItem(rows.get(m.seq)!, marks, m.score));
    const last = page[page.length - 1];
    const more = start >= 0 && start + limit < matches.length;
    return { items, ...(cursor ? {} : { total: matches.length }), sort, next_cursor: more && last ? encodeCursor({ k: keyOf(last), seq: last.seq }) : null };
  }

  const rows = await s.storage.memories.listPage(f, {
    sort: sort as Exclude<ListSort, "relevance">,
    after: cursor ? { key: cursor.k, seq: cursor.seq } : null,
    limit: limit + 1,
    now,
    previewChars: LIST_PREVIEW_CHARS,
  });
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const result: ListResult = {
    items: page.map((r) => toItem(r, marks)),
    sort,
    next_cursor: more && last ? encodeCursor({ k: sort === "newest" ? last.createdAt : last.strength, seq: last.seq }) : null,
  };
  if (!cursor) result.total = await s.storage.memories.countSelected(f, now);
  return result;
}

export type BulkDeleteInput = BrowseDeleteInput;

/**
 * POST /memories/delete: deletes every memory the filters select, in one
 * transaction, only when `confirm_count` equals the current count (the
 * number the person was shown); otherwise 409 with the current count.
 */
export async function deleteSelection(s: Services, input: BulkDeleteInput): Promise<{ deleted: number; links_removed: number }> {
  if (!input || typeof input !== "object" || Array.isArray(input)) throw invalid("the body must be a JSON object");
  rejectUnknown(input, [...FILTER_KEYS, "confirm_count"]);
  const f = parseFilters(input);
  await applyMarks(s, f);
  const c = input.confirm_count;
  const confirm = typeof c === "number" ? c : Number.NaN;
  if (!Number.isInteger(confirm) || confirm < 0) throw invalid("confirm_count is required: the number of memories you were shown and agreed to delete");
  const now = s.now();
  // A query's matches need the embedder (async), so they are found first; the
  // filters are applied again inside the transaction, where the count is checked.
  const matched = f.query !== null ? await searchMatches(s, f, now) : null;
  const done = await s.storage.memories.deleteSelected(f, now, matched ? matched.map((m) => m.seq) : null, confirm);
  if ("count" in done)
    throw conflict(`the selection now holds ${counted(done.count, "memory", "memories")}, not ${confirm}; count again and confirm`, { count: done.count });
  for (const r of done.deleted) s.index.remove(r.seq);
  return { deleted: done.deleted.length, links_removed: done.linksRemoved };
}

/** GET /memories/count: how many memories the filters select (what bulk delete would remove). */
export async function countSelection(s: Services, input: ListInput): Promise<{ count: number }> {
  rejectUnknown(input, FILTER_KEYS);
  const f = parseFilters(input);
  await applyMarks(s, f);
  const now = s.now();
  if (f.query !== null) return { count: (await searchMatches(s, f, now)).length };
  return { count: await s.storage.memories.countSelected(f, now) };
}

/** GET /memories/facets: the projects and domains the filters can name, busiest first (two index scans); within a scope, its own. */
export function listFacets(
  s: Services,
  scope: ProjectScope = null,
): Promise<{ projects: { name: string; count: number }[]; domains: { name: string; count: number }[] }> {
  return s.storage.memories.facets(scope);
}
