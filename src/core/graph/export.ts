import { isoTime } from "../dates";
import { parseNonNegative, parseTagName, previewOf } from "./nodes";
import type { ExportSlice } from "./store";
import { MEMORY_TYPES, normalizeMemoryType } from "../memories";
import { parseLimit } from "../search";
import type { Services } from "../services";
import type { ProjectScope } from "../scope";
import { round3 } from "../memories";
import { DEFAULT_DOMAIN, type Tag } from "../memories";
import { GRAPH_EXPORT_DEFAULT_LIMIT, GRAPH_EXPORT_MAX_LIMIT, GRAPH_PREVIEW_CHARS } from "./tuning";

export interface ExportNode {
  id: string;
  short_id: string;
  /** The first GRAPH_PREVIEW_CHARS characters; the full text comes from op=neighbors (which does not mark the memory used). */
  preview: string;
  /** Length of the full content in characters. */
  content_chars: number;
  memory_type: string;
  project: string | null;
  source_agent: string;
  created_at: string;
  strength: number;
  effective_strength: number;
  connections: number;
  /** Primary domain (= tags[0].tag, or "general" when the memory has no tag). */
  domain: string;
  /** Domain tags, strongest association first. */
  tags: Tag[];
}

export interface ExportEdge {
  source: string;
  target: string;
  relationship: string;
  weight: number;
}

/** A domain or type: how many memories the whole store holds, and how many are nodes of this slice. */
export interface ExportCount {
  name: string;
  memories: number;
  nodes: number;
}

export interface ExportMeta {
  total_memories: number;
  total_links: number;
  /** Memories passing the filters, before the limit. */
  matched: number;
  nodes: number;
  edges: number;
  limit: number;
  /** True when the limit cut the matched memories (the weakest were left out). */
  truncated: boolean;
  filters: { domain: string | null; type: string | null; tag: string | null; minStrength: number | null };
  generated_at: string;
}

export interface GraphExport {
  nodes: ExportNode[];
  edges: ExportEdge[];
  domains: ExportCount[];
  types: ExportCount[];
  meta: ExportMeta;
}

export interface ExportInput {
  domain?: unknown;
  type?: unknown;
  tag?: unknown;
  minStrength?: unknown;
  limit?: unknown;
}

/**
 * The export slice for /viz: memories passing the filters, strongest
 * (effective, decayed) first, capped by `limit`; an edge only when both of
 * its ends are nodes. Ranking and filtering run inside the database, in one
 * read snapshot (GraphStore.exportSlice). Within a scope, nodes, edges,
 * connections and every total are the scope's.
 */
export async function exportGraph(s: Services, input: ExportInput = {}, scope: ProjectScope = null): Promise<GraphExport> {
  const filters = parseExportInput(input);
  const now = s.now();
  const slice = await s.storage.graph.exportSlice({ ...filters, now, previewChars: GRAPH_PREVIEW_CHARS, scope });
  return shape(slice, filters, now);
}

type Filters = ReturnType<typeof parseExportInput>;

function parseExportInput(input: ExportInput) {
  const domain = parseTagName(input.domain, "domain");
  const tag = parseTagName(input.tag, "tag");
  const type = input.type === undefined || input.type === null || input.type === "" ? null : normalizeMemoryType(input.type, "type");
  const minStrength = parseNonNegative(input.minStrength, "minStrength");
  const limit = parseLimit(input.limit, GRAPH_EXPORT_DEFAULT_LIMIT, GRAPH_EXPORT_MAX_LIMIT);
  return { domain, tag, type, minStrength, limit };
}

function shape(slice: ExportSlice, { domain, tag, type, minStrength, limit }: Filters, now: number): GraphExport {
  const { rows } = slice;
  const tags = new Map<string, Tag[]>();
  for (const r of slice.tags) {
    const list = tags.get(r.memoryId);
    if (list) list.push({ tag: r.tag, weight: r.weight });
    else tags.set(r.memoryId, [{ tag: r.tag, weight: r.weight }]);
  }
  const nodes: ExportNode[] = rows.map((r) => {
    const t = tags.get(r.id) ?? [];
    return {
      id: r.id,
      short_id: r.id.slice(0, 8),
      preview: previewOf(r.head, r.len),
      content_chars: r.len,
      memory_type: r.memoryType,
      project: r.project,
      source_agent: r.sourceAgent,
      created_at: isoTime(r.createdAt),
      strength: round3(r.strength),
      effective_strength: round3(r.eff),
      connections: r.linkCount,
      domain: t.length ? t[0].tag : DEFAULT_DOMAIN,
      tags: t,
    };
  });
  const edges = slice.edges.map((e) => ({ source: e.source, target: e.target, relationship: e.relationship, weight: round3(e.weight) }));
  return {
    nodes,
    edges,
    domains: countBy(
      slice.storeDomains,
      nodes.map((n) => n.domain),
    ),
    types: countBy(
      slice.storeTypes,
      nodes.map((n) => n.memory_type),
      MEMORY_TYPES,
    ),
    meta: {
      total_memories: slice.totalMemories,
      total_links: slice.totalLinks,
      matched: slice.matched,
      nodes: nodes.length,
      edges: edges.length,
      limit,
      truncated: slice.matched > nodes.length,
      filters: { domain, type, tag, minStrength },
      generated_at: isoTime(now),
    },
  };
}

/** Store-wide counts joined with the slice's counts; `always` names are listed even at zero. */
function countBy(store: { name: string; n: number }[], inSlice: string[], always: readonly string[] = []): ExportCount[] {
  const out = new Map<string, ExportCount>();
  for (const name of always) out.set(name, { name, memories: 0, nodes: 0 });
  for (const r of store) out.set(r.name ?? DEFAULT_DOMAIN, { name: r.name ?? DEFAULT_DOMAIN, memories: r.n, nodes: 0 });
  for (const name of inSlice) {
    const c = out.get(name);
    if (c) c.nodes++;
  }
  return [...out.values()].sort((a, b) => b.memories - a.memories || a.name.localeCompare(b.name));
}
