import { invalid } from "../../errors";
import { isoTime } from "../dates";
import type { Services } from "../services";
import { effectiveStrengthSql, round3 } from "../memories";
// Straight from the file: this constant is read while modules load, before the memories barrel is complete (an import cycle).
import { DEFAULT_DOMAIN, normalizeTag } from "../memories/tags";
import { GRAPH_PREVIEW_CHARS } from "../tuning";

/**
 * A memory as the graph operations list it: enough for one line of text (the
 * memsvc_graph tool) or a tooltip, without the full content.
 */
export interface GraphMemory {
  id: string;
  short_id: string;
  /** First GRAPH_PREVIEW_CHARS characters, whitespace collapsed, "…" when cut. */
  preview: string;
  memory_type: string;
  project: string | null;
  /** Primary domain: the memory's highest-weight domain tag. */
  domain: string;
  created_at: string;
  effective_strength: number;
  /** Number of links at either end. */
  connections: number;
}

/**
 * SQL for the primary domain of the memory aliased `m`: its highest-weight
 * tag (ties by name, as tagsOf orders them), "general" when it has none.
 */
export const PRIMARY_DOMAIN_SQL = `coalesce((SELECT t.tag FROM memory_tags t WHERE t.memory_id = m.id ORDER BY t.weight DESC, t.tag LIMIT 1), '${DEFAULT_DOMAIN}')`;

/** Effective strength of `m` (binds :now). */
export const EFFECTIVE_SQL = effectiveStrengthSql("m.strength", "m.refreshed_at");

/** Columns every graph listing selects from `memories m` (binds :now and :preview). */
export const GRAPH_COLUMNS_SQL = `m.seq AS seq, m.id AS id, substr(m.content, 1, :preview) AS head, length(m.content) AS len,
  m.memory_type AS memory_type, m.project AS project, m.created_at AS created_at, m.link_count AS link_count,
  ${EFFECTIVE_SQL} AS eff, ${PRIMARY_DOMAIN_SQL} AS domain`;

export interface GraphRow {
  seq: number;
  id: string;
  head: string;
  len: number;
  memory_type: string;
  project: string | null;
  created_at: number;
  link_count: number;
  eff: number;
  domain: string;
}

export function previewOf(head: string, len: number): string {
  const flat = head.replace(/\s+/g, " ").trim();
  return len > GRAPH_PREVIEW_CHARS ? `${flat}…` : flat;
}

export function toGraphMemory(r: GraphRow): GraphMemory {
  return {
    id: r.id,
    short_id: r.id.slice(0, 8),
    preview: previewOf(r.head, r.len),
    memory_type: r.memory_type,
    project: r.project,
    domain: r.domain,
    created_at: isoTime(r.created_at),
    effective_strength: round3(r.eff),
    connections: r.link_count,
  };
}

/** GraphMemory of each id that exists, keyed by id. */
export function graphMemories(s: Services, ids: readonly string[]): Map<string, GraphMemory> {
  const out = new Map<string, GraphMemory>();
  if (ids.length === 0) return out;
  const rows = s.store.sqlite
    .query<GraphRow, { now: number; preview: number; ids: string }>(`SELECT ${GRAPH_COLUMNS_SQL} FROM memories m WHERE m.id IN (SELECT value FROM json_each(:ids))`)
    .all({ now: s.now(), preview: GRAPH_PREVIEW_CHARS, ids: JSON.stringify(ids) });
  for (const r of rows) out.set(r.id, toGraphMemory(r));
  return out;
}

/** A domain or tag name as stored (normalizeTag); null when absent. */
export function parseTagName(value: unknown, field: string): string | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string") throw invalid(`${field} must be a string`);
  if (value.length > 100) throw invalid(`${field} is longer than 100 characters`);
  const tag = normalizeTag(value);
  if (!tag) throw invalid(`${field} must contain a letter or digit, got "${value.slice(0, 40)}"`);
  return tag;
}

/** A finite number >= 0 (strings as query parameters give them); null when absent. */
export function parseNonNegative(value: unknown, field: string): number | null {
  if (value === undefined || value === null || value === "") return null;
  const n = typeof value === "number" ? value : typeof value === "string" && /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n) || n < 0) throw invalid(`${field} must be a number >= 0 (e.g. 0.3), got "${String(value).slice(0, 40)}"`);
  return n;
}
