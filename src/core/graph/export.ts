import { isoTime } from "../dates";
import { EFFECTIVE_SQL, parseNonNegative, parseTagName, PRIMARY_DOMAIN_SQL, previewOf } from "./nodes";
import { MEMORY_TYPES, normalizeMemoryType } from "../memories";
import { parseLimit } from "../search";
import type { Services } from "../services";
import { round3 } from "../memories";
import { DEFAULT_DOMAIN, type Tag } from "../memories";
import { GRAPH_EXPORT_DEFAULT_LIMIT, GRAPH_EXPORT_MAX_LIMIT, GRAPH_PREVIEW_CHARS } from "../tuning";

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

/** Slices of at least 1/SCAN_SHARE of the store read every tag and link instead of probing by id. */
const SCAN_SHARE = 4;

interface NodeRow {
  id: string;
  head: string;
  len: number;
  memory_type: string;
  project: string | null;
  source_agent: string;
  created_at: number;
  strength: number;
  link_count: number;
  eff: number;
  matched: number;
}

/**
 * The export slice for /viz: memories passing the filters, strongest
 * (effective, decayed) first, capped by `limit`; an edge only when both of
 * its ends are nodes. Ranking and filtering run inside SQLite.
 */
export function exportGraph(s: Services, input: ExportInput = {}): GraphExport {
  const filters = parseExportInput(input);
  // One read transaction: nodes, edges and counts come from the same snapshot.
  return s.store.sqlite.transaction(() => slice(s, filters))();
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

function slice(s: Services, { domain, tag, type, minStrength, limit }: Filters): GraphExport {
  const now = s.now();
  const db = s.store.sqlite;
  // The primary domain is computed in SQL only to filter on it; otherwise it
  // comes from the tags fetched below (same order: weight, then name).
  const rows = db
    .query<NodeRow, { now: number; preview: number; type: string | null; tag: string | null; domain: string | null; min: number | null; limit: number }>(
      `SELECT *, count(*) OVER () AS matched FROM (
         SELECT m.id AS id, substr(m.content, 1, :preview) AS head, length(m.content) AS len, m.memory_type AS memory_type,
                m.project AS project, m.source_agent AS source_agent, m.created_at AS created_at, m.strength AS strength,
                m.link_count AS link_count, ${EFFECTIVE_SQL} AS eff
           FROM memories m
          WHERE (:type IS NULL OR m.memory_type = :type)
            AND (:tag IS NULL OR EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_id = m.id AND t.tag = :tag))
            AND ${domain ? `${PRIMARY_DOMAIN_SQL} = :domain` : ":domain IS NULL"})
        WHERE (:min IS NULL OR eff >= :min)
        ORDER BY eff DESC, created_at DESC, id
        LIMIT :limit`,
    )
    .all({ now, preview: GRAPH_PREVIEW_CHARS, type, tag, domain, min: minStrength, limit });

  const totals = db.query<{ m: number; l: number }, []>("SELECT (SELECT count(*) FROM memories) AS m, (SELECT count(*) FROM links) AS l").get()!;
  // A slice holding a good share of the store reads all tags and links and
  // keeps its own in JS: cheaper than probing an id list per row, and the
  // store-wide domain counts fall out of the same pass.
  const scan = rows.length * SCAN_SHARE >= totals.m;
  const ids = rows.map((r) => r.id);
  const inSlice = new Set(ids);
  const tags = tagsFor(s, scan ? null : ids);
  const nodes: ExportNode[] = rows.map((r) => {
    const t = tags.get(r.id) ?? [];
    return {
      id: r.id,
      short_id: r.id.slice(0, 8),
      preview: previewOf(r.head, r.len),
      content_chars: r.len,
      memory_type: r.memory_type,
      project: r.project,
      source_agent: r.source_agent,
      created_at: isoTime(r.created_at),
      strength: round3(r.strength),
      effective_strength: round3(r.eff),
      connections: r.link_count,
      domain: t.length ? t[0].tag : DEFAULT_DOMAIN,
      tags: t,
    };
  });

  let edgeRows: ExportEdge[] = [];
  if (nodes.length > 0 && scan) {
    edgeRows = db.query<ExportEdge, []>("SELECT from_id AS source, to_id AS target, relationship, weight FROM links").all();
    if (nodes.length < totals.m) edgeRows = edgeRows.filter((e) => inSlice.has(e.source) && inSlice.has(e.target));
  } else if (nodes.length > 0) {
    edgeRows = db
      .query<ExportEdge, { ids: string }>(
        `SELECT from_id AS source, to_id AS target, relationship, weight FROM links
          WHERE from_id IN (SELECT value FROM json_each(:ids)) AND to_id IN (SELECT value FROM json_each(:ids))`,
      )
      .all({ ids: JSON.stringify(ids) });
  }
  const edges = edgeRows.map((e) => ({ source: e.source, target: e.target, relationship: e.relationship, weight: round3(e.weight) }));

  let storeDomains: { name: string; n: number }[];
  if (scan) {
    const primary = [...tags.values()].map((t) => t[0].tag);
    for (let i = tags.size; i < totals.m; i++) primary.push(DEFAULT_DOMAIN);
    storeDomains = tally(primary);
  } else {
    storeDomains = db.query<{ name: string; n: number }, []>(`SELECT domain AS name, count(*) AS n FROM (SELECT ${PRIMARY_DOMAIN_SQL} AS domain FROM memories m) GROUP BY domain`).all();
  }
  const matched = rows.length ? rows[0].matched : 0;
  return {
    nodes,
    edges,
    domains: countBy(storeDomains, nodes.map((n) => n.domain)),
    types: countBy(db.query<{ name: string; n: number }, []>("SELECT memory_type AS name, count(*) AS n FROM memories GROUP BY memory_type").all(), nodes.map((n) => n.memory_type), MEMORY_TYPES),
    meta: {
      total_memories: totals.m,
      total_links: totals.l,
      matched,
      nodes: nodes.length,
      edges: edges.length,
      limit,
      truncated: matched > nodes.length,
      filters: { domain, type, tag, minStrength },
      generated_at: isoTime(now),
    },
  };
}

/** Tags of the given memories (null: of every memory), each list strongest first, as tagsOf orders them. */
function tagsFor(s: Services, ids: string[] | null): Map<string, Tag[]> {
  const rows = ids
    ? s.store.sqlite
        .query<{ memory_id: string; tag: string; weight: number }, { ids: string }>(
          "SELECT memory_id, tag, weight FROM memory_tags WHERE memory_id IN (SELECT value FROM json_each(:ids)) ORDER BY weight DESC, tag",
        )
        .all({ ids: JSON.stringify(ids) })
    : s.store.sqlite.query<{ memory_id: string; tag: string; weight: number }, []>("SELECT memory_id, tag, weight FROM memory_tags ORDER BY weight DESC, tag").all();
  const out = new Map<string, Tag[]>();
  for (const r of rows) {
    const list = out.get(r.memory_id);
    if (list) list.push({ tag: r.tag, weight: r.weight });
    else out.set(r.memory_id, [{ tag: r.tag, weight: r.weight }]);
  }
  return out;
}

function tally(names: string[]): { name: string; n: number }[] {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].map(([name, n]) => ({ name, n }));
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
