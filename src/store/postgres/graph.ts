import { and, desc, eq, gt, or, sql, type SQL as Fragment } from "drizzle-orm";
import type { ExportSlice, GraphAt, GraphMemoryRow, GraphStore, LinkAround, NewLink } from "../../core/graph";
// Straight from the file: read while modules load (the memories barrel may not be complete yet).
import { DEFAULT_DOMAIN } from "../../core/memories/tags";
import { DECAY_FLOOR, DECAY_HALF_LIFE_DAYS } from "../../core/memories/tuning";
import { byParams, inOneTransaction } from "./chunk";
import { reportingContention } from "./contention";
import { ingestStatement } from "./ingest-statement";
import type { PgHandle } from "./open";

const DAY_MS = 86_400_000;

/**
 * graph/ on PostgreSQL. link_count is kept by the links_count trigger and the
 * primary domain by memory_primary_domain's trigger (migrations/0001_init.sql).
 * Id lists travel as one JSON parameter (jsonb_array_elements_text), not one
 * parameter per id: a BFS frontier can hold 50,000 ids, past PostgreSQL's
 * 65,535 bind parameters.
 */
export function pgGraph(h: PgHandle): GraphStore {
  const { memories: m, links: l, memoryTags: tg, memoryPrimaryDomain: pd } = h.t;
  const idIn = (col: unknown, ids: readonly string[]) => sql`${col} IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`;
  /** Effective (decayed) strength at `now`: the formula of core/memories/strength.ts. */
  const eff = (now: number) =>
    sql<number>`(${m.strength} * (${sql.raw(String(DECAY_FLOOR))} + ${sql.raw(String(1 - DECAY_FLOOR))} * power(0.5, greatest(0, ${now}::bigint - ${m.refreshedAt})::float8 / ${sql.raw(String(DAY_MS * DECAY_HALF_LIFE_DAYS))})))::float8`;
  // The default inlined, not bound: GROUP BY must see the same expression as the select list.
  const domain = sql<string>`coalesce(${pd.domain}, ${sql.raw(`'${DEFAULT_DOMAIN.replace(/'/g, "''")}'`)})`;
  const S = sql.raw(h.schema);
  /** `col` (a project) is in the scope: one JSON parameter, like id lists. */
  const inScope = (col: unknown, scope: readonly string[]) => sql`${col} IN (SELECT jsonb_array_elements_text(${JSON.stringify(scope)}::jsonb))`;
  /** The memory with id `col` is in the scope. */
  const idInScope = (col: unknown, scope: readonly string[]) =>
    sql`EXISTS (SELECT 1 FROM ${S}.memories o WHERE o.id = ${col} AND ${inScope(sql`o.project`, scope)})`;
  /**
   * Links of the outer `memories` row whose other end is in the scope, counted
   * as the links_count trigger counts them (a link to itself once). Only for a
   * scoped caller (the row is then in the scope itself); link_count otherwise.
   */
  const scopedLinkCount = (scope: readonly string[]) =>
    sql<number>`((SELECT count(*) FROM ${S}.links sl WHERE sl.from_id = ${m.id} AND ${idInScope(sql`sl.to_id`, scope)})
      + (SELECT count(*) FROM ${S}.links sl WHERE sl.to_id = ${m.id} AND sl.from_id <> ${m.id} AND ${idInScope(sql`sl.from_id`, scope)}))::int`;
  const graphColumns = ({ now, previewChars, scope = null }: GraphAt) => ({
    id: m.id,
    head: sql<string>`substr(${m.content}, 1, ${previewChars}::int)`,
    len: sql<number>`length(${m.content})`,
    memoryType: m.memoryType,
    project: m.project,
    createdAt: m.createdAt,
    linkCount: scope === null ? m.linkCount : scopedLinkCount(scope),
    eff: eff(now),
    domain,
  });

  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  /** The pair of memories a link's trigger locks, lower id first. */
  const lockKey = (x: NewLink) => (x.fromId < x.toId ? `${x.fromId}\u0000${x.toId}` : `${x.toId}\u0000${x.fromId}`);

  /** One row per (from, to, relationship), the strongest weight: one INSERT cannot update a row twice. */
  function strongest(links: readonly NewLink[]): NewLink[] {
    const byKey = new Map<string, NewLink>();
    for (const x of links) {
      const key = `${x.fromId}\u0000${x.toId}\u0000${x.relationship}`;
      const had = byKey.get(key);
      if (!had || had.weight < x.weight) byKey.set(key, x);
    }
    return [...byKey.values()];
  }

  return {
    nearestFromIndex: false,

    async addLinks(links, now) {
      if (links.length === 0) return;
      // In id order: the link_count trigger locks both memories of each link,
      // and two writers that lock shared neighbours in one order do not deadlock (what still does is a 503).
      const ordered = strongest(links).sort((a, b) => cmp(lockKey(a), lockKey(b)));
      const parts = byParams(ordered.map((x) => ({ fromId: x.fromId, toId: x.toId, relationship: x.relationship, weight: x.weight, createdAt: now })));
      await inOneTransaction(h, parts.length, async (th) => {
        for (const part of parts) {
          await th.orm
            .insert(l)
            .values(part)
            .onConflictDoUpdate({ target: [l.fromId, l.toId, l.relationship], set: { weight: sql`greatest(${l.weight}, excluded.weight)` } });
        }
      });
    },

    async linkToNearest({ memoryId, vector, project, limit, minSimilarity, exclude, now }) {
      // pgvector: cosine distance over the HNSW index, nearest first; the
      // similarity floor applies after the k nearest, as core's index does.
      const s = h.schema;
      // The neighbours are locked (KEY SHARE, in id order as the trigger locks them) before the
      // links to them are written: a neighbour another server deletes meanwhile is waited for and
      // then skipped, where an unlocked one would fail the links' foreign key at insert (a 500).
      const rows = await h.sql.unsafe(
        `WITH near AS (
           SELECT m.id, 1 - (v.embedding <=> $3::vector) AS sim
             FROM ${s}.memory_vec v JOIN ${s}.memories m ON m.seq = v.seq
            WHERE m.id <> $1 AND m.id NOT IN (SELECT jsonb_array_elements_text($7::jsonb)) AND ($4::text IS NULL OR m.project = $4)
            ORDER BY v.embedding <=> $3::vector
            LIMIT $5),
         kept AS (
           SELECT m.id FROM ${s}.memories m
            WHERE m.id IN (SELECT id FROM near WHERE sim >= $6)
            ORDER BY m.id
              FOR KEY SHARE)
         INSERT INTO ${s}.links AS l (from_id, to_id, relationship, weight, created_at)
         SELECT $1, n.id, 'related', least(1, greatest(0, n.sim)), $2 FROM near n JOIN kept USING (id)
          ORDER BY n.id
         ON CONFLICT (from_id, to_id, relationship) DO UPDATE SET weight = greatest(l.weight, excluded.weight)
         RETURNING 1`,
        [memoryId, now, `[${Array.from(vector).join(",")}]`, project, limit, minSimilarity, JSON.stringify(exclude)],
      );
      return rows.length;
    },

    async insertAndLink(row, link) {
      // PostgreSQL text cannot hold U+0000: bound as a parameter it is refused (22021, a 400 naming
      // it) as by every other statement; inlined it would cut the message short.
      const texts = [row.id, row.content, row.memoryType, row.project, row.sourceAgent, row.sourceAgentId, row.sourceDomain, row.sourceSession, row.privacy];
      const nul = [...texts, row.createdBy, ...row.tags.map((g) => g.tag)].find((v) => v?.includes("\u0000"));
      if (nul) await h.sql.unsafe("SELECT $1::text", [nul]);
      // Two statements in one simple-protocol message: outside a transaction PostgreSQL runs them as one
      // (an implicit transaction: both or neither), inside one they join it.
      const send = () => h.sql.unsafe(ingestStatement(h.schema, row, link)).simple() as unknown as Promise<unknown[][]>;
      const results = h.inTransaction ? await send() : await reportingContention(send);
      const [{ seq }] = results[0] as { seq: number }[];
      return { seq: Number(seq), links: (results[1] as unknown[]).length };
    },

    async linksOf(id, relationship, scope = null) {
      const rows = await h.orm
        .select({ fromId: l.fromId, toId: l.toId, relationship: l.relationship, weight: l.weight })
        .from(l)
        .where(
          and(
            or(eq(l.fromId, id), eq(l.toId, id)),
            relationship === null ? undefined : eq(l.relationship, relationship),
            scope === null ? undefined : idInScope(sql`CASE WHEN ${l.fromId} = ${id} THEN ${l.toId} ELSE ${l.fromId} END`, scope),
          ),
        )
        .orderBy(desc(l.weight));
      return rows.map((r) =>
        r.fromId === id
          ? { other: r.toId, relationship: r.relationship, weight: r.weight, direction: "out" as const }
          : { other: r.fromId, relationship: r.relationship, weight: r.weight, direction: "in" as const },
      );
    },

    async linksAround(frontier, scope = null) {
      if (frontier.length === 0) return [];
      // A scoped search starts in the scope and only steps to its memories, so
      // the frontier is in it: a link is followed when both its ends are.
      const rows = await h.orm
        .select({ fromId: l.fromId, toId: l.toId, relationship: l.relationship, weight: l.weight })
        .from(l)
        .where(
          and(or(idIn(l.fromId, frontier), idIn(l.toId, frontier)), scope === null ? undefined : and(idInScope(l.fromId, scope), idInScope(l.toId, scope))),
        )
        .orderBy(desc(l.weight));
      const inFrontier = new Set(frontier);
      const out: LinkAround[] = [];
      for (const r of rows) {
        if (inFrontier.has(r.fromId)) out.push({ node: r.fromId, other: r.toId, ...r });
        if (inFrontier.has(r.toId)) out.push({ node: r.toId, other: r.fromId, ...r });
      }
      return out;
    },

    async memories(ids, at) {
      if (ids.length === 0) return [];
      const scope = at.scope ?? null;
      return (await h.orm
        .select(graphColumns(at))
        .from(m)
        .leftJoin(pd, eq(pd.memoryId, m.id))
        .where(and(idIn(m.id, ids), scope === null ? undefined : inScope(m.project, scope)))) as GraphMemoryRow[];
    },

    async hubs({ domain: wanted, limit, ...at }) {
      const e = eff(at.now);
      const scope = at.scope ?? null;
      if (scope !== null) {
        // The scope's linked memories ranked by their links within it (memories_project first).
        const n = scopedLinkCount(scope);
        return (await h.orm
          .select(graphColumns(at))
          .from(m)
          .leftJoin(pd, eq(pd.memoryId, m.id))
          .where(and(inScope(m.project, scope), gt(m.linkCount, 0), sql`${n} > 0`, wanted === null ? undefined : sql`${domain} = ${wanted}`))
          .orderBy(sql`${n} DESC`, sql`${e} DESC`, m.seq)
          .limit(limit)) as GraphMemoryRow[];
      }
      return (await h.orm
        .select(graphColumns(at))
        .from(m)
        .leftJoin(pd, eq(pd.memoryId, m.id))
        .where(and(gt(m.linkCount, 0), wanted === null ? undefined : sql`${domain} = ${wanted}`))
        .orderBy(desc(m.linkCount), sql`${e} DESC`, m.seq)
        .limit(limit)) as GraphMemoryRow[];
    },

    async exportSlice(q) {
      // One REPEATABLE READ transaction: nodes, edges and counts come from the same snapshot.
      if (h.inTransaction) return exportSlice(h, q);
      return (await h.sql.begin("isolation level repeatable read read only", (tx) => exportSlice(h.bind(tx), q))) as ExportSlice;
    },
  };

  async function exportSlice(
    hh: PgHandle,
    { now, previewChars, type, tag, domain: wanted, minStrength, limit, scope = null }: Parameters<GraphStore["exportSlice"]>[0],
  ): Promise<ExportSlice> {
    const e = eff(now);
    // Within a scope every row, count and total below is the scope's alone.
    const scoped = scope === null ? undefined : inScope(m.project, scope);
    const filters: (Fragment | undefined)[] = [
      scoped,
      type === null ? undefined : eq(m.memoryType, type),
      tag === null ? undefined : sql`EXISTS (SELECT 1 FROM ${tg} WHERE ${tg.memoryId} = ${m.id} AND ${tg.tag} = ${tag})`,
      wanted === null ? undefined : sql`${domain} = ${wanted}`,
      minStrength === null ? undefined : sql`${e} >= ${minStrength}`,
    ];
    const rows = await hh.orm
      .select({
        id: m.id,
        head: sql<string>`substr(${m.content}, 1, ${previewChars}::int)`,
        len: sql<number>`length(${m.content})`,
        memoryType: m.memoryType,
        project: m.project,
        sourceAgent: m.sourceAgent,
        createdAt: m.createdAt,
        strength: m.strength,
        linkCount: scope === null ? m.linkCount : scopedLinkCount(scope),
        eff: e,
        matched: sql<number>`(count(*) OVER ())::int`,
      })
      .from(m)
      .leftJoin(pd, eq(pd.memoryId, m.id))
      .where(and(...filters))
      .orderBy(sql`${e} DESC`, desc(m.createdAt), sql`${m.id} COLLATE "C"`)
      .limit(limit);
    const [totals] =
      scope === null
        ? await hh.orm
            .select({ m: sql<number>`(SELECT count(*) FROM ${m})::int`, l: sql<number>`(SELECT count(*) FROM ${l})::int` })
            .from(sql`(SELECT 1) AS one`)
        : await hh.orm
            .select({
              m: sql<number>`(SELECT count(*) FROM ${S}.memories sm WHERE ${inScope(sql`sm.project`, scope)})::int`,
              l: sql<number>`(SELECT count(*) FROM ${S}.memories sm JOIN ${S}.links sl ON sl.from_id = sm.id
                               WHERE ${inScope(sql`sm.project`, scope)} AND ${idInScope(sql`sl.to_id`, scope)})::int`,
            })
            .from(sql`(SELECT 1) AS one`);
    const ids = rows.map((r) => r.id);
    const tags = ids.length
      ? await hh.orm
          .select({ memoryId: tg.memoryId, tag: tg.tag, weight: tg.weight })
          .from(tg)
          .where(idIn(tg.memoryId, ids))
          .orderBy(desc(tg.weight), sql`${tg.tag} COLLATE "C"`)
      : [];
    const edges = ids.length
      ? await hh.orm
          .select({ source: l.fromId, target: l.toId, relationship: l.relationship, weight: l.weight })
          .from(l)
          .where(and(idIn(l.fromId, ids), idIn(l.toId, ids)))
      : [];
    const storeDomains = await hh.orm
      .select({ name: domain, n: sql<number>`count(*)::int` })
      .from(m)
      .leftJoin(pd, eq(pd.memoryId, m.id))
      .where(scoped)
      .groupBy(domain);
    const storeTypes = await hh.orm.select({ name: m.memoryType, n: sql<number>`count(*)::int` }).from(m).where(scoped).groupBy(m.memoryType);
    return { rows, matched: rows.length ? rows[0].matched : 0, totalMemories: totals.m, totalLinks: totals.l, tags, edges, storeDomains, storeTypes };
  }
}
