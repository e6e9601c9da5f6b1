import { invalid } from "../../errors";
import { exportGraph, type GraphExport } from "./export";
import { graphMemories, parseTagName, toGraphMemory, type GraphMemory } from "./nodes";
import { normalizeRelationship } from "./links";
import { resolveInScope, toView, type MemoryView } from "../memories";
import type { ProjectScope } from "../scope";
import { parseLimit } from "../search";
import type { Services } from "../services";
import { DEFAULT_DOMAIN, tagsOf, type Tag } from "../memories";
import { GRAPH_DEFAULT_LIMIT, GRAPH_PATH_MAX_HOPS, GRAPH_PATH_MAX_VISITED, GRAPH_PREVIEW_CHARS } from "./tuning";
import { MAX_LIMIT } from "../tuning";

export type { GraphMemory } from "./nodes";

/** One stored link as seen from the memory asked about: "out" = it points at the neighbour. */
export interface NeighborLink {
  relationship: string;
  direction: "out" | "in";
  weight: number;
}

export interface Neighbor extends GraphMemory {
  /** Strongest link weight to this neighbour (the sort key). */
  weight: number;
  /** Every link between the two memories, strongest first. */
  relationships: NeighborLink[];
}

export interface NeighborsResult {
  /** The memory asked about, in full (content included), with its domain tags. */
  memory: MemoryView & { domain: string; tags: Tag[] };
  relationship: string | null;
  /** Neighbours matching the relationship filter, before the limit. */
  total: number;
  count: number;
  neighbors: Neighbor[];
}

/** Full memory plus its domain tags; does not mark the memory used (only GET /memory does). Outside the scope: the 404 of an unknown id. */
async function centre(s: Services, rawId: unknown, scope: ProjectScope): Promise<NeighborsResult["memory"]> {
  const row = await resolveInScope(s, rawId, scope);
  const tags = (await tagsOf(s, [row.id])).get(row.id) ?? [];
  const view = { ...toView(row, s.now()), domain: tags[0]?.tag ?? DEFAULT_DOMAIN, tags };
  // Its stored link count includes links to other projects: a scoped caller sees the count within its scope.
  if (scope !== null) view.connections = (await graphMemories(s, [row.id], scope)).get(row.id)?.connections ?? 0;
  return view;
}

function parseRelationship(value: unknown): string | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string") throw invalid("relationship must be a string");
  if (value.length > 100) throw invalid("relationship is longer than 100 characters");
  return normalizeRelationship(value);
}

/** Memories linked to one memory (either direction), strongest link first; within a scope, only its memories. */
export async function neighbors(
  s: Services,
  input: { id: unknown; limit?: unknown; relationship?: unknown },
  scope: ProjectScope = null,
): Promise<NeighborsResult> {
  const memory = await centre(s, input.id, scope);
  const limit = parseLimit(input.limit, GRAPH_DEFAULT_LIMIT, MAX_LIMIT);
  const relationship = parseRelationship(input.relationship);
  const links = await s.storage.graph.linksOf(memory.id, relationship, scope);
  const byOther = new Map<string, NeighborLink[]>();
  for (const l of links) {
    const list = byOther.get(l.other) ?? [];
    list.push({ relationship: l.relationship, direction: l.direction, weight: Math.round(l.weight * 1000) / 1000 });
    byOther.set(l.other, list);
  }
  const found = await graphMemories(s, [...byOther.keys()], scope);
  const all: Neighbor[] = [];
  for (const [other, rels] of byOther) {
    const m = found.get(other);
    if (m) all.push({ ...m, weight: rels[0].weight, relationships: rels });
  }
  all.sort((a, b) => b.weight - a.weight || b.effective_strength - a.effective_strength || a.id.localeCompare(b.id));
  const list = all.slice(0, limit);
  return { memory, relationship, total: all.length, count: list.length, neighbors: list };
}

export interface HubsResult {
  domain: string | null;
  count: number;
  /** Most-linked first; `connections` is the hub's link count. Memories without links are never hubs. */
  hubs: GraphMemory[];
}

/** The most highly connected memories, optionally within one primary domain; within a scope, ranked by links within it. */
export async function hubs(s: Services, input: { limit?: unknown; domain?: unknown } = {}, scope: ProjectScope = null): Promise<HubsResult> {
  const limit = parseLimit(input.limit, GRAPH_DEFAULT_LIMIT, MAX_LIMIT);
  const domain = parseTagName(input.domain, "domain");
  const rows = await s.storage.graph.hubs({ now: s.now(), previewChars: GRAPH_PREVIEW_CHARS, scope, domain, limit });
  const list = rows.map(toGraphMemory);
  return { domain, count: list.length, hubs: list };
}

/** A stored link on a path; links[i] joins path[i] and path[i + 1] (from/to keep the stored direction). */
export interface PathLink {
  from_id: string;
  to_id: string;
  relationship: string;
  weight: number;
}

export interface PathResult {
  from: string;
  to: string;
  found: boolean;
  /** Number of links on the path; null when none was found. */
  hops: number | null;
  path: GraphMemory[];
  links: PathLink[];
  /** Why nothing was found (present only when found is false). */
  message?: string;
}

/**
 * Shortest path (fewest links, either direction) by breadth-first search in
 * core, one batched store query per level (linksAround), on both engines.
 * Not a recursive CTE: a CTE over an undirected graph enumerates paths rather
 * than visiting each memory once, so it cannot stop at GRAPH_PATH_MAX_VISITED
 * and blows up on hubs; the BFS costs at most GRAPH_PATH_MAX_HOPS round trips.
 * Gives up after GRAPH_PATH_MAX_HOPS hops or GRAPH_PATH_MAX_VISITED memories:
 * "no path" is an answer, not an error. Within a scope both ends must be in
 * it and the search only steps through its memories.
 */
export async function path(s: Services, input: { id: unknown; target_id: unknown }, scope: ProjectScope = null): Promise<PathResult> {
  const from = (await resolveInScope(s, input.id, scope, "id")).id;
  const to = (await resolveInScope(s, input.target_id, scope, "target_id")).id;
  const parent = new Map<string, PathLink | null>([[from, null]]);
  let frontier = [from];
  let depth = 0;
  let capped = false;
  while (!parent.has(to) && frontier.length > 0 && depth < GRAPH_PATH_MAX_HOPS && !capped) {
    const next: string[] = [];
    for (const l of await s.storage.graph.linksAround(frontier, scope)) {
      if (parent.has(l.other)) continue;
      parent.set(l.other, { from_id: l.fromId, to_id: l.toId, relationship: l.relationship, weight: Math.round(l.weight * 1000) / 1000 });
      next.push(l.other);
      if (parent.size >= GRAPH_PATH_MAX_VISITED) capped = true;
    }
    frontier = next;
    depth++;
  }
  if (!parent.has(to)) {
    const why = capped
      ? `the search stopped after reaching ${GRAPH_PATH_MAX_VISITED} memories`
      : frontier.length === 0
        ? "they are not connected"
        : `none within ${GRAPH_PATH_MAX_HOPS} links`;
    return { from, to, found: false, hops: null, path: [], links: [], message: `no link path from ${from.slice(0, 8)} to ${to.slice(0, 8)}: ${why}` };
  }
  const ids = [to];
  const links: PathLink[] = [];
  for (let step = parent.get(to); step; step = parent.get(ids[0])) {
    links.unshift(step);
    ids.unshift(step.from_id === ids[0] ? step.to_id : step.from_id);
  }
  const found = await graphMemories(s, ids, scope);
  return { from, to, found: true, hops: links.length, path: ids.map((id) => found.get(id)!), links };
}

export type { GraphOp } from "./ops";
import { GRAPH_OPS, type GraphOp } from "./ops";
import type { GraphInput } from "./schema";

const PARAMS: Record<GraphOp, readonly string[]> = {
  neighbors: ["id", "limit", "relationship"],
  hubs: ["limit", "domain"],
  path: ["id", "target_id"],
  export: ["domain", "type", "tag", "minStrength", "limit"],
};

/**
 * GET /graph's `op` and the parameters it takes, on the query as sent (the
 * edge runs it before unknown names are dropped). An unknown parameter is a
 * 400 too, so a misspelt filter (min_strength) is never silently ignored.
 */
export function checkGraphQuery(q: Record<string, unknown>): GraphOp {
  const op = q.op;
  if (op === undefined || op === "") throw invalid(`op is required: one of ${GRAPH_OPS.join(", ")}`);
  if (typeof op !== "string" || !(GRAPH_OPS as readonly string[]).includes(op))
    throw invalid(`unknown op "${String(op).slice(0, 40)}": use one of ${GRAPH_OPS.join(", ")}`);
  const allowed = PARAMS[op as GraphOp];
  const unknown = Object.keys(q).filter((k) => k !== "op" && !allowed.includes(k));
  if (unknown.length) throw invalid(`unknown parameter ${unknown.map((k) => `"${k.slice(0, 40)}"`).join(", ")} for op=${op}; accepted: ${allowed.join(", ")}`);
  return op as GraphOp;
}

/** GET /graph: runs the op (its parameters' values are read by the op's function), within the caller's scope. */
export async function graphQuery(s: Services, q: GraphInput, scope: ProjectScope = null): Promise<NeighborsResult | HubsResult | PathResult | GraphExport> {
  switch (checkGraphQuery(q)) {
    case "neighbors":
      return neighbors(s, { id: q.id, limit: q.limit, relationship: q.relationship }, scope);
    case "hubs":
      return hubs(s, { limit: q.limit, domain: q.domain }, scope);
    case "path":
      return path(s, { id: q.id, target_id: q.target_id }, scope);
    case "export":
      return exportGraph(s, { domain: q.domain, type: q.type, tag: q.tag, minStrength: q.minStrength, limit: q.limit }, scope);
  }
}
