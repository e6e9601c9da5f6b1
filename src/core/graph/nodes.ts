import { invalid } from "../../errors";
import { isoTime } from "../dates";
import type { Services } from "../services";
import { round3 } from "../memories";
import { normalizeTag } from "../memories/tags";
import type { GraphMemoryRow } from "./store";
import type { ProjectScope } from "../scope";
import { GRAPH_PREVIEW_CHARS } from "./tuning";

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
  /** Number of links at either end (within a scope: to memories in it). */
  connections: number;
}

export function previewOf(head: string, len: number): string {
  const flat = head.replace(/\s+/g, " ").trim();
  return len > GRAPH_PREVIEW_CHARS ? `${flat}…` : flat;
}

export function toGraphMemory(r: GraphMemoryRow): GraphMemory {
  return {
    id: r.id,
    short_id: r.id.slice(0, 8),
    preview: previewOf(r.head, r.len),
    memory_type: r.memoryType,
    project: r.project,
    domain: r.domain,
    created_at: isoTime(r.createdAt),
    effective_strength: round3(r.eff),
    connections: r.linkCount,
  };
}

/** GraphMemory of each id that exists (within the scope), keyed by id. */
export async function graphMemories(s: Services, ids: readonly string[], scope: ProjectScope = null): Promise<Map<string, GraphMemory>> {
  const out = new Map<string, GraphMemory>();
  if (ids.length === 0) return out;
  const rows = await s.storage.graph.memories(ids, { now: s.now(), previewChars: GRAPH_PREVIEW_CHARS, scope });
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

/**
 * A project-scoped caller's `connections`: the links each listed memory has
 * to memories in the scope. A memory's stored link count includes links to
 * other projects' memories, so showing it would tell a scoped member those
 * exist. One query for the listed ids, and only for scoped callers.
 */
export async function scopedConnections<T extends { id: string; connections: number }>(s: Services, scope: ProjectScope, items: T[]): Promise<T[]> {
  if (scope === null || items.length === 0) return items;
  const counts = await graphMemories(s, [...new Set(items.map((m) => m.id))], scope);
  for (const m of items) m.connections = counts.get(m.id)?.connections ?? 0;
  return items;
}
