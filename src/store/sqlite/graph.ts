import type { ExportSlice, GraphMemoryRow, GraphStore, LinkAround, LinkOf } from "../../core/graph";
import { effectiveStrengthSql } from "./strength";
// Straight from the file: read while modules load (the memories barrel may not be complete yet).
import { DEFAULT_DOMAIN } from "../../core/memories/tags";
import type { SqliteHandle } from "./storage";
import { BULK_LOAD_FROM, RECENT_LINK_LIST_FROM } from "./tuning";
import { BULK_LINK_TRIGGERS, linkCountsDeferred, withTriggersSuspended } from "./bulk-load";
import { LINK_COUNT_SQL, MEMORY_COUNT_SQL } from "./row-counts";

/** Slices of at least 1/SCAN_SHARE of the store read every tag and link instead of probing by id (bench/graph.ts, 10k nodes). */
const SCAN_SHARE = 4;

/** Primary domain of the memory aliased `m`: its highest-weight tag (ties by name, as tagsOf orders them), "general" without tags. */
const PRIMARY_DOMAIN_SQL = `coalesce((SELECT t.tag FROM memory_tags t WHERE t.memory_id = m.id ORDER BY t.weight DESC, t.tag LIMIT 1), '${DEFAULT_DOMAIN}')`;

/** Effective strength of `m` (binds :now). */
const EFFECTIVE_SQL = effectiveStrengthSql("m.strength", "m.refreshed_at");

/** The memory of column `col` is in the scope (binds :scope, a JSON array of project names). */
const inScope = (col: string) => `${col} IN (SELECT value FROM json_each(:scope))`;
/** The memory with id `col` is in the scope. */
const idInScope = (col: string) => `EXISTS (SELECT 1 FROM memories o WHERE o.id = ${col} AND ${inScope("o.project")})`;

/**
 * Links of `m` whose other end is in the scope (binds :scope), counted as
 * the link-count trigger counts them: a link to itself once. Only run for
 * a scoped caller (`m` is then in the scope itself); m.link_count otherwise.
 */
const SCOPED_LINK_COUNT_SQL = `((SELECT count(*) FROM links l WHERE l.from_id = m.id AND ${idInScope("l.to_id")})
  + (SELECT count(*) FROM links l WHERE l.to_id = m.id AND l.from_id <> m.id AND ${idInScope("l.from_id")}))`;

/** Columns of GraphMemoryRow from `memories m` (binds :now and :preview, and :scope when scoped). */
const graphColumns = (scoped: boolean) => `m.seq AS seq, m.id AS id, substr(m.content, 1, :preview) AS head, length(m.content) AS len,
  m.memory_type AS memoryType, m.project AS project, m.created_at AS createdAt, ${scoped ? SCOPED_LINK_COUNT_SQL : "m.link_count"} AS linkCount,
  ${EFFECTIVE_SQL} AS eff, ${PRIMARY_DOMAIN_SQL} AS domain`;
const GRAPH_COLUMNS_SQL = graphColumns(false);

/** The scope as bound (:scope). */
const scopeJson = (scope: readonly string[]) => JSON.stringify(scope);

type Count = { name: string; n: number };

/** graph/ on SQLite. Link counts are kept by triggers (0001_init.sql). */
export function sqliteGraph(h: SqliteHandle): GraphStore {
  const db = h.sqlite;

  const insertLink = () =>
    db.query<unknown, [string, string, string, number, number]>(
      `INSERT INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(from_id, to_id, relationship) DO UPDATE SET weight = max(weight, excluded.weight)`,
    );

  return {
    nearestFromIndex: true,

    addLinks(links, now) {
      return h.write(() => {
        if (links.length < BULK_LOAD_FROM) {
          const stmt = insertLink();
          for (const l of links) stmt.run(l.fromId, l.toId, l.relationship, l.weight, now);
          return;
        }
        // An import's links: each memory's link count and the link count move once for the batch,
        // by what links_count_insert and row_counts_links_insert would have added row by row.
        db.transaction(() =>
          withTriggersSuspended(db, BULK_LINK_TRIGGERS, () => {
            const insert = db.query<unknown, [string, string, string, number, number]>(
              "INSERT OR IGNORE INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, ?, ?, ?)",
            );
            const reweigh = db.query<unknown, [number, string, string, string]>(
              "UPDATE links SET weight = max(weight, ?) WHERE from_id = ? AND to_id = ? AND relationship = ?",
            );
            const added = new Map<string, number>();
            let inserted = 0;
            for (const l of links) {
              if (insert.run(l.fromId, l.toId, l.relationship, l.weight, now).changes === 0) {
                reweigh.run(l.weight, l.fromId, l.toId, l.relationship);
                continue;
              }
              inserted++;
              added.set(l.fromId, (added.get(l.fromId) ?? 0) + 1);
              // The trigger's `id IN (from, to)`: a link to itself counts once.
              if (l.toId !== l.fromId) added.set(l.toId, (added.get(l.toId) ?? 0) + 1);
            }
            // An import into an empty store counts every memory's links once, when it ends (bulk-load.ts).
            if (!linkCountsDeferred(db)) {
              const count = db.query<unknown, [number, string]>("UPDATE memories SET link_count = link_count + ? WHERE id = ?");
              for (const [id, n] of added) count.run(n, id);
            }
            db.query<unknown, [number]>("UPDATE row_counts SET n = n + ? WHERE name = 'links'").run(inserted);
          }),
        )();
      });
    },

    linkToNearest({ memoryId, exclude, near, now }) {
      return h.write(() => {
        if (!near || near.length === 0) return 0;
        const skip = new Set(exclude);
        const ids = db
          .query<{ seq: number; id: string }, [string]>("SELECT seq, id FROM memories WHERE seq IN (SELECT value FROM json_each(?))")
          .all(JSON.stringify(near.map((h) => h.seq)));
        const idOf = new Map(ids.map((r) => [r.seq, r.id]));
        const stmt = insertLink();
        let n = 0;
        for (const h of near) {
          const other = idOf.get(h.seq);
          if (!other || other === memoryId || skip.has(other)) continue;
          stmt.run(memoryId, other, "related", Math.max(0, Math.min(1, h.similarity)), now);
          n++;
        }
        return n;
      });
    },

    async linksOf(id, relationship, scope = null) {
      if (scope !== null)
        return db
          .query<LinkOf, { id: string; rel: string | null; scope: string }>(
            `SELECT to_id AS other, relationship, weight, 'out' AS direction FROM links
              WHERE from_id = :id AND (:rel IS NULL OR relationship = :rel) AND ${idInScope("to_id")}
             UNION ALL
             SELECT from_id AS other, relationship, weight, 'in' AS direction FROM links
              WHERE to_id = :id AND (:rel IS NULL OR relationship = :rel) AND ${idInScope("from_id")}
             ORDER BY weight DESC`,
          )
          .all({ id, rel: relationship, scope: scopeJson(scope) });
      return db
        .query<LinkOf, { id: string; rel: string | null }>(
          `SELECT to_id AS other, relationship, weight, 'out' AS direction FROM links WHERE from_id = :id AND (:rel IS NULL OR relationship = :rel)
           UNION ALL
           SELECT from_id AS other, relationship, weight, 'in' AS direction FROM links WHERE to_id = :id AND (:rel IS NULL OR relationship = :rel)
           ORDER BY weight DESC`,
        )
        .all({ id, rel: relationship });
    },

    async linksAround(frontier, scope = null) {
      if (scope !== null)
        return db
          .query<LinkAround, { frontier: string; scope: string }>(
            `SELECT from_id AS node, to_id AS other, from_id AS fromId, to_id AS toId, relationship, weight FROM links
              WHERE from_id IN (SELECT value FROM json_each(:frontier)) AND ${idInScope("to_id")}
             UNION ALL
             SELECT to_id AS node, from_id AS other, from_id AS fromId, to_id AS toId, relationship, weight FROM links
              WHERE to_id IN (SELECT value FROM json_each(:frontier)) AND ${idInScope("from_id")}
             ORDER BY weight DESC`,
          )
          .all({ frontier: JSON.stringify(frontier), scope: scopeJson(scope) });
      return db
        .query<LinkAround, { frontier: string }>(
          `SELECT from_id AS node, to_id AS other, from_id AS fromId, to_id AS toId, relationship, weight FROM links WHERE from_id IN (SELECT value FROM json_each(:frontier))
           UNION ALL
           SELECT to_id AS node, from_id AS other, from_id AS fromId, to_id AS toId, relationship, weight FROM links WHERE to_id IN (SELECT value FROM json_each(:frontier))
           ORDER BY weight DESC`,
        )
        .all({ frontier: JSON.stringify(frontier) });
    },

    async memories(ids, { now, previewChars, scope = null }) {
      if (ids.length === 0) return [];
      if (scope !== null)
        return db
          .query<GraphMemoryRow, { now: number; preview: number; ids: string; scope: string }>(
            `SELECT ${graphColumns(true)} FROM memories m WHERE m.id IN (SELECT value FROM json_each(:ids)) AND ${inScope("m.project")}`,
          )
          .all({ now, preview: previewChars, ids: JSON.stringify(ids), scope: scopeJson(scope) });
      return db
        .query<GraphMemoryRow, { now: number; preview: number; ids: string }>(
          `SELECT ${GRAPH_COLUMNS_SQL} FROM memories m WHERE m.id IN (SELECT value FROM json_each(:ids))`,
        )
        .all({ now, preview: previewChars, ids: JSON.stringify(ids) });
    },

    async hubs({ now, previewChars, domain, limit, scope = null }) {
      if (scope !== null)
        // The scope's linked memories ranked by their links within it: read through memories_project, each
        // counted by two link probes. A scoped caller's cost grows with its projects, never with the store.
        return db
          .query<GraphMemoryRow, { now: number; preview: number; domain: string | null; limit: number; scope: string }>(
            `SELECT * FROM (SELECT ${graphColumns(true)} FROM memories m WHERE ${inScope("m.project")} AND m.link_count > 0)
              WHERE linkCount > 0 AND (:domain IS NULL OR domain = :domain)
              ORDER BY linkCount DESC, eff DESC, seq LIMIT :limit`,
          )
          .all({ now, preview: previewChars, domain, limit, scope: scopeJson(scope) });
      // The most linked first, from the partial link-count index (migration 0014: rows with at least
      // RECENT_LINK_LIST_FROM links); only when those are too few are the rest scanned. Every row of the
      // first part sorts before every row of the second, so the two answers simply concatenate.
      const part = (cond: string, n: number) =>
        db
          .query<GraphMemoryRow, { now: number; preview: number; domain: string | null; limit: number }>(
            `SELECT * FROM (SELECT ${GRAPH_COLUMNS_SQL} FROM memories m WHERE ${cond})
              WHERE (:domain IS NULL OR domain = :domain)
              ORDER BY linkCount DESC, eff DESC, seq LIMIT :limit`,
          )
          .all({ now, preview: previewChars, domain, limit: n });
      // A named domain reads its memories from memory_primary_domain's index first (the same primary
      // domain the trigger keeps; untagged memories, "general", have no row there). Without one, the
      // rest is a scan of the rows with 1-7 links: only when fewer than `limit` (at most 100) have 8
      // or more, i.e. a small store or one with few links (20k memories: ~13 ms, review measured).
      const inDomain = domain && domain !== DEFAULT_DOMAIN ? " AND m.id IN (SELECT memory_id FROM memory_primary_domain WHERE domain = :domain)" : "";
      const top = part(`m.link_count >= ${RECENT_LINK_LIST_FROM}${inDomain}`, limit);
      return top.length < limit ? top.concat(part(`m.link_count > 0 AND m.link_count < ${RECENT_LINK_LIST_FROM}${inDomain}`, limit - top.length)) : top;
    },

    async exportSlice(q) {
      // One read transaction: nodes, edges and counts come from the same snapshot.
      return db.transaction(() => exportSlice(q))();
    },
  };

  function exportSlice(q: Parameters<GraphStore["exportSlice"]>[0]): ExportSlice {
    if (q.scope) return scopedExportSlice(q, q.scope);
    const rows = sliceRows(q, null);
    const totals = db.query<{ m: number; l: number }, []>(`SELECT ${MEMORY_COUNT_SQL} AS m, ${LINK_COUNT_SQL} AS l`).get()!;
    // A slice holding a good share of the store reads all tags and links and
    // keeps its own in JS: cheaper than probing an id list per row, and the
    // store-wide domain counts fall out of the same pass.
    const scan = rows.length * SCAN_SHARE >= totals.m;
    const whole = rows.length === totals.m;
    const ids = rows.map((r) => r.id);
    const inSlice = new Set(ids);
    let tags: ExportSlice["tags"];
    let storeDomains: Count[];
    let edges: ExportSlice["edges"] = [];
    if (scan) {
      const all = db.query<ExportSlice["tags"][number], []>("SELECT memory_id AS memoryId, tag, weight FROM memory_tags ORDER BY weight DESC, tag").all();
      // The first tag seen of each memory is its primary domain (the order above).
      const counts = new Map<string, number>();
      const seen = new Set<string>();
      for (const t of all) {
        if (seen.has(t.memoryId)) continue;
        seen.add(t.memoryId);
        counts.set(t.tag, (counts.get(t.tag) ?? 0) + 1);
      }
      if (totals.m > seen.size) counts.set(DEFAULT_DOMAIN, (counts.get(DEFAULT_DOMAIN) ?? 0) + totals.m - seen.size);
      storeDomains = [...counts].map(([name, n]) => ({ name, n }));
      tags = whole ? all : all.filter((t) => inSlice.has(t.memoryId));
      if (rows.length > 0) {
        edges = db.query<ExportSlice["edges"][number], []>("SELECT from_id AS source, to_id AS target, relationship, weight FROM links").all();
        if (!whole) edges = edges.filter((e) => inSlice.has(e.source) && inSlice.has(e.target));
      }
    } else {
      ({ tags, edges } = probeTagsAndEdges(ids));
      storeDomains = db
        .query<Count, []>(`SELECT domain AS name, count(*) AS n FROM (SELECT ${PRIMARY_DOMAIN_SQL} AS domain FROM memories m) GROUP BY domain`)
        .all();
    }
    const storeTypes = db.query<Count, []>("SELECT memory_type AS name, count(*) AS n FROM memories GROUP BY memory_type").all();
    return { rows, matched: rows.length ? rows[0].matched : 0, totalMemories: totals.m, totalLinks: totals.l, tags, edges, storeDomains, storeTypes };
  }

  /**
   * The slice's rows: memories passing the filters (and in the scope), strongest
   * first. The primary domain is computed in SQL only to filter on it; otherwise
   * it comes from the tags fetched afterwards (same order: weight, then name).
   */
  function sliceRows(
    { now, previewChars, type, tag, domain, minStrength, limit }: Parameters<GraphStore["exportSlice"]>[0],
    scope: readonly string[] | null,
  ): (ExportSlice["rows"][number] & { matched: number })[] {
    const params = { now, preview: previewChars, type, tag, domain, min: minStrength, limit, ...(scope ? { scope: scopeJson(scope) } : {}) };
    return db
      .query<ExportSlice["rows"][number] & { matched: number }, typeof params>(
        `SELECT *, count(*) OVER () AS matched FROM (
           SELECT m.id AS id, substr(m.content, 1, :preview) AS head, length(m.content) AS len, m.memory_type AS memoryType,
                  m.project AS project, m.source_agent AS sourceAgent, m.created_at AS createdAt, m.strength AS strength,
                  ${scope ? SCOPED_LINK_COUNT_SQL : "m.link_count"} AS linkCount, ${EFFECTIVE_SQL} AS eff
             FROM memories m
            WHERE (:type IS NULL OR m.memory_type = :type)
              AND (:tag IS NULL OR EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_id = m.id AND t.tag = :tag))
              AND ${domain ? `${PRIMARY_DOMAIN_SQL} = :domain` : ":domain IS NULL"}${scope ? ` AND ${inScope("m.project")}` : ""})
          WHERE (:min IS NULL OR eff >= :min)
          ORDER BY eff DESC, createdAt DESC, id
          LIMIT :limit`,
      )
      .all(params);
  }

  /** Tags of the slice's memories and the links between them, probed by id. */
  function probeTagsAndEdges(ids: readonly string[]): Pick<ExportSlice, "tags" | "edges"> {
    const json = JSON.stringify(ids);
    const tags = db
      .query<ExportSlice["tags"][number], { ids: string }>(
        "SELECT memory_id AS memoryId, tag, weight FROM memory_tags WHERE memory_id IN (SELECT value FROM json_each(:ids)) ORDER BY weight DESC, tag",
      )
      .all({ ids: json });
    const edges =
      ids.length === 0
        ? []
        : db
            .query<ExportSlice["edges"][number], { ids: string }>(
              `SELECT from_id AS source, to_id AS target, relationship, weight FROM links
                WHERE from_id IN (SELECT value FROM json_each(:ids)) AND to_id IN (SELECT value FROM json_each(:ids))`,
            )
            .all({ ids: json });
    return { tags, edges };
  }

  /**
   * The slice as a scoped caller sees it: only the scope's memories, links
   * between them, and totals, domain and type counts over the scope alone
   * (read through memories_project), so no figure counts another project.
   */
  function scopedExportSlice(q: Parameters<GraphStore["exportSlice"]>[0], scope: readonly string[]): ExportSlice {
    const rows = sliceRows(q, scope);
    const p = { scope: scopeJson(scope) };
    const totals = db
      .query<{ m: number; l: number }, typeof p>(
        `SELECT (SELECT count(*) FROM memories m WHERE ${inScope("m.project")}) AS m,
                (SELECT count(*) FROM memories m JOIN links l ON l.from_id = m.id WHERE ${inScope("m.project")} AND ${idInScope("l.to_id")}) AS l`,
      )
      .get(p)!;
    const { tags, edges } = probeTagsAndEdges(rows.map((r) => r.id));
    const storeDomains = db
      .query<Count, typeof p>(
        `SELECT domain AS name, count(*) AS n FROM (SELECT ${PRIMARY_DOMAIN_SQL} AS domain FROM memories m WHERE ${inScope("m.project")}) GROUP BY domain`,
      )
      .all(p);
    const storeTypes = db
      .query<Count, typeof p>(`SELECT memory_type AS name, count(*) AS n FROM memories m WHERE ${inScope("m.project")} GROUP BY memory_type`)
      .all(p);
    return { rows, matched: rows.length ? rows[0].matched : 0, totalMemories: totals.m, totalLinks: totals.l, tags, edges, storeDomains, storeTypes };
  }
}
