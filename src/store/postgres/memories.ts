import { and, asc, desc, eq, getTableColumns, inArray, isNotNull, like, or, sql } from "drizzle-orm";
import type { AnchorRow, MemoriesStore, MemoryRow, VersionRow } from "../../core/memories";
import type { MemoriesBulkStore } from "../../core/memories/store-bulk";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import { byParams, inOneTransaction } from "./chunk";
import type { PgHandle } from "./open";
import { reportingContention } from "./contention";

/**
 * memories/ on PostgreSQL: drizzle pg-core over the handle's schema-qualified
 * tables (`h.t`); raw SQL only for the links join of the detail view (a UNION
 * drizzle cannot say compactly). Multi-statement writes run in one
 * transaction: the caller's when the handle is bound to one, else their own.
 */
/** Text ordered by bytes, as SQLite orders it (a database's collation may sort "-" elsewhere). */
const byte = (col: AnyPgColumn) => sql`${col} COLLATE "C"`;

/** Every column of MemoryRow (and created_by, as drizzle's rows carry it), bigint columns as numbers. */
const MEMORY_COLUMNS = `m.seq::float8 AS seq, m.id, m.content, m.memory_type AS "memoryType", m.project, m.source_agent AS "sourceAgent",
  m.source_agent_id AS "sourceAgentId", m.source_domain AS "sourceDomain", m.source_session AS "sourceSession", m.privacy,
  m.created_at::float8 AS "createdAt", m.updated_at::float8 AS "updatedAt", m.refreshed_at::float8 AS "refreshedAt", m.strength,
  m.shown_count AS "shownCount", m.used_count AS "usedCount", m.last_shown_at::float8 AS "lastShownAt", m.last_used_at::float8 AS "lastUsedAt",
  m.link_count AS "linkCount", m.created_by AS "createdBy"`;

export function pgMemories(h: PgHandle): Omit<MemoriesStore, keyof MemoriesBulkStore> {
  const t = h.t;
  const m = t.memories;
  // Every column but the generated full-text vector: rows leave as MemoryRow.
  const { fts: _fts, ...cols } = getTableColumns(m);
  const inTx = <T>(fn: (hh: PgHandle) => Promise<T>): Promise<T> =>
    h.inTransaction ? fn(h) : (reportingContention(() => h.sql.begin((tx) => fn(h.bind(tx)))) as Promise<T>);
  const a = t.memoryAnchors;
  const anchorOf = (r: typeof a.$inferSelect): AnchorRow => ({
    memoryId: r.memoryId,
    repo: r.repo,
    branch: r.branch,
    commit: r.commitId,
    paths: JSON.parse(r.paths),
    anchoredAt: r.anchoredAt,
    stale: r.stale === null ? null : JSON.parse(r.stale),
    confirmedAt: r.confirmedAt ?? null,
  });
  const hist = t.memoryHistory;
  const versionOf = (r: typeof hist.$inferSelect): VersionRow => ({
    version: r.version,
    content: r.content,
    memoryType: r.memoryType,
    project: r.project,
    reason: r.reason,
    sourceId: r.sourceId,
    replacedAt: r.replacedAt,
  });

  return {
    async insertMemories(rows) {
      if (rows.length === 0) return [];
      return inTx(async (hh) => {
        const values = rows.map((r) => ({
          id: r.id,
          content: r.content,
          memoryType: r.memoryType,
          project: r.project,
          sourceAgent: r.sourceAgent,
          sourceAgentId: r.sourceAgentId,
          sourceDomain: r.sourceDomain,
          sourceSession: r.sourceSession,
          privacy: r.privacy,
          createdAt: r.createdAt,
          updatedAt: r.updatedAt,
          refreshedAt: r.refreshedAt,
          strength: r.strength,
          createdBy: r.createdBy ?? null,
        }));
        const seqOf = new Map<string, number>();
        for (const part of byParams(values)) {
          for (const r of await hh.orm.insert(m).values(part).returning({ id: m.id, seq: m.seq })) seqOf.set(r.id, r.seq);
        }
        const seqs = rows.map((r) => seqOf.get(r.id)!);
        for (const part of byParams(rows.map((r, i) => ({ seq: seqs[i], embedding: Array.from(r.vector) })))) await hh.orm.insert(t.memoryVec).values(part);
        const tags = rows.flatMap((r) => r.tags.map((g) => ({ memoryId: r.id, tag: g.tag, weight: g.weight })));
        for (const part of byParams(tags)) await hh.orm.insert(t.memoryTags).values(part);
        return seqs;
      });
    },

    async countSession(session) {
      const [r] = await h.orm.select({ n: sql<number>`count(*)::int` }).from(m).where(eq(m.sourceSession, session));
      return Number(r.n);
    },

    async claimSession(session) {
      return inTx(async (hh) => {
        // Held to the end of the caller's transaction: a second server's ingest of the session waits, then counts ours.
        await hh.sql.unsafe("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`memsvc:${hh.schema}:session:${session}`]);
        const [r] = await hh.orm.select({ n: sql<number>`count(*)::int` }).from(m).where(eq(m.sourceSession, session));
        return Number(r.n);
      });
    },

    async memoryById(id) {
      const [r] = await h.orm.select(cols).from(m).where(eq(m.id, id));
      return (r as MemoryRow | undefined) ?? null;
    },

    async memoriesByIdPrefix(prefix, limit) {
      // LIKE, not a range: under a non-C collation "-" does not sort as in SQLite. The prefix is hex and "-" only.
      return (await h.orm
        .select(cols)
        .from(m)
        .where(like(m.id, `${prefix}%`))
        .orderBy(byte(m.id))
        .limit(limit)) as MemoryRow[];
    },

    async memoriesBySeq(seqs) {
      if (seqs.length === 0) return [];
      // Raw SQL on the search path: drizzle's query building cost more JavaScript than the read.
      const rows = await h.sql.unsafe(`SELECT ${MEMORY_COLUMNS} FROM ${h.schema}.memories m WHERE m.seq = ANY($1::bigint[])`, [[...seqs]]);
      return [...rows] as MemoryRow[];
    },

    async markUsed(id, at, strength) {
      return inTx(async (hh) => {
        const [r] = await hh.orm
          .update(m)
          .set({ usedCount: sql`${m.usedCount} + 1`, lastUsedAt: at, refreshedAt: at, strength })
          .where(eq(m.id, id))
          .returning(cols);
        if (!r) return null;
        await hh.orm.insert(t.memoryEvents).values({ memoryId: id, kind: "used", at });
        return r as MemoryRow;
      });
    },

    async updateMemory(id, change) {
      const [r] = await h.orm.update(m).set(change).where(eq(m.id, id)).returning(cols);
      return (r as MemoryRow | undefined) ?? null;
    },

    async setVector(seq, vector) {
      await h.orm
        .update(t.memoryVec)
        .set({ embedding: Array.from(vector) })
        .where(eq(t.memoryVec.seq, seq));
    },

    async deleteMemories(ids) {
      if (ids.length === 0) return 0;
      const list = [...ids];
      return inTx(async (hh) => {
        const l = t.links;
        const [c] = await hh.orm
          .select({ n: sql<number>`count(*)::int` })
          .from(l)
          .where(or(inArray(l.fromId, list), inArray(l.toId, list)));
        // Vectors, links, tags, anchors and versions go by foreign-key cascade.
        await hh.orm.delete(m).where(inArray(m.id, list));
        return Number(c.n);
      });
    },

    async writeTags(memoryId, tags) {
      await inTx(async (hh) => {
        await hh.orm.delete(t.memoryTags).where(eq(t.memoryTags.memoryId, memoryId));
        if (tags.length) await hh.orm.insert(t.memoryTags).values(tags.map((g) => ({ memoryId, tag: g.tag, weight: g.weight })));
      });
    },

    async tagsOf(memoryIds) {
      if (memoryIds.length === 0) return [];
      const g = t.memoryTags;
      return h.orm
        .select({ memoryId: g.memoryId, tag: g.tag, weight: g.weight })
        .from(g)
        .where(inArray(g.memoryId, [...memoryIds]))
        .orderBy(byte(g.memoryId), desc(g.weight), byte(g.tag));
    },

    async linksOf(memoryId, previewChars, limit, scope = null) {
      const s = h.schema;
      // Within a scope the other end must be in it ($4: its projects as JSON); unscoped, today's query.
      const within = scope === null ? "" : " AND m.project IN (SELECT jsonb_array_elements_text($4::jsonb))";
      const rows = await h.sql.unsafe(
        `SELECT * FROM (
           SELECT m.id AS id, left(m.content, $2) AS head, length(m.content) AS length, m.memory_type AS "memoryType", l.relationship AS relationship, l.weight AS weight, 'out' AS direction
             FROM ${s}.links l JOIN ${s}.memories m ON m.id = l.to_id WHERE l.from_id = $1${within}
           UNION ALL
           SELECT m.id, left(m.content, $2), length(m.content), m.memory_type, l.relationship, l.weight, 'in'
             FROM ${s}.links l JOIN ${s}.memories m ON m.id = l.from_id WHERE l.to_id = $1${within}) x
         ORDER BY weight DESC, id COLLATE "C" LIMIT $3`,
        scope === null ? [memoryId, previewChars, limit] : [memoryId, previewChars, limit, JSON.stringify(scope)],
      );
      return (rows as { id: string; head: string; length: number; memoryType: string; relationship: string; weight: number; direction: "out" | "in" }[]).map(
        (r) => ({
          ...r,
          length: Number(r.length),
          weight: Number(r.weight),
        }),
      );
    },

    async snapshot(memoryId) {
      const [r] = await h.orm.select({ content: m.content, memoryType: m.memoryType, project: m.project }).from(m).where(eq(m.id, memoryId));
      return r ?? null;
    },

    async addVersion(memoryId, v, keep) {
      return inTx(async (hh) => {
        // The memory's row lock orders concurrent versions of one memory (two servers updating it at once).
        await hh.orm.select({ id: m.id }).from(m).where(eq(m.id, memoryId)).for("update");
        const [r] = await hh.orm
          .select({ n: sql<number>`coalesce(max(${hist.version}), 0)::int + 1` })
          .from(hist)
          .where(eq(hist.memoryId, memoryId));
        const n = Number(r.n);
        await hh.orm.insert(hist).values({ memoryId, version: n, ...v });
        await hh.orm.delete(hist).where(and(eq(hist.memoryId, memoryId), sql`${hist.version} <= ${n - keep}`));
        return n;
      });
    },

    async versions(memoryId) {
      return (await h.orm.select().from(hist).where(eq(hist.memoryId, memoryId)).orderBy(asc(hist.version))).map(versionOf);
    },

    async version(memoryId, version) {
      const [r] = await h.orm
        .select()
        .from(hist)
        .where(and(eq(hist.memoryId, memoryId), eq(hist.version, version)));
      return r ? versionOf(r) : null;
    },

    async deleteVersions(memoryId) {
      await h.orm.delete(hist).where(eq(hist.memoryId, memoryId));
    },

    async anchorPaths(memoryIds, repo) {
      const out = new Map<string, string[]>();
      if (memoryIds.length === 0) return out;
      const rows = await h.orm
        .select({ memoryId: a.memoryId, paths: a.paths })
        .from(a)
        .where(and(eq(a.repo, repo), inArray(a.memoryId, [...memoryIds])));
      for (const r of rows) out.set(r.memoryId, JSON.parse(r.paths));
      return out;
    },

    async upsertAnchors(rows) {
      if (rows.length === 0) return;
      const values = rows.map((r) => ({
        memoryId: r.memoryId,
        repo: r.repo,
        branch: r.branch,
        commitId: r.commit,
        paths: JSON.stringify(r.paths),
        anchoredAt: r.anchoredAt,
        stale: null,
        staleAt: null,
        evidence: r.evidence ?? null,
      }));
      const parts = byParams(values);
      await inOneTransaction(h, parts.length, async (th) => {
        for (const part of parts) {
          await th.orm
            .insert(a)
            .values(part)
            .onConflictDoUpdate({
              target: [a.memoryId, a.repo],
              set: {
                branch: sql`excluded.branch`,
                commitId: sql`excluded.commit_id`,
                paths: sql`excluded.paths`,
                anchoredAt: sql`excluded.anchored_at`,
                stale: null,
                staleAt: null,
                rechecked: null,
                confirmedAt: null,
                evidence: sql`coalesce(excluded.evidence, ${a.evidence})`,
              },
            });
        }
      });
    },

    async anchorsOf(memoryIds) {
      if (memoryIds.length === 0) return [];
      return (
        await h.orm
          .select()
          .from(a)
          .where(inArray(a.memoryId, [...memoryIds]))
          .orderBy(byte(a.memoryId), desc(a.anchoredAt), byte(a.repo))
      ).map(anchorOf);
    },

    async staleMarks(memoryIds) {
      if (memoryIds.length === 0) return [];
      // Raw SQL on the search and recall path (as memoriesBySeq).
      const rows = await h.sql.unsafe(
        `SELECT memory_id AS "memoryId", stale FROM ${h.schema}.memory_anchors WHERE stale IS NOT NULL AND memory_id = ANY($1::text[]) ORDER BY stale_at DESC`,
        [[...memoryIds]],
      );
      return (rows as { memoryId: string; stale: string }[]).map((r) => ({ memoryId: r.memoryId, stale: JSON.parse(r.stale) }));
    },

    async repoAnchors(repo, scope = null) {
      // Within a scope: anchors of its memories only.
      const inScope =
        scope === null
          ? undefined
          : sql`${a.memoryId} IN (SELECT id FROM ${sql.raw(h.schema)}.memories WHERE project IN (SELECT jsonb_array_elements_text(${JSON.stringify(scope)}::jsonb)))`;
      return (
        await h.orm
          .select()
          .from(a)
          .where(and(eq(a.repo, repo), inScope))
          .orderBy(asc(a.anchoredAt), byte(a.memoryId))
      ).map(anchorOf);
    },

    async markStale(repo, marks, fresh, at) {
      // One statement per kind whatever the count (a client sends up to 10,000): the marks travel as one JSON parameter.
      return inTx(async (hh) => {
        const s = hh.schema;
        const last = new Map(marks.map((x) => [x.id, JSON.stringify(x.mark)]));
        const set = marks.length
          ? ((await hh.sql.unsafe(
              `UPDATE ${s}.memory_anchors a SET stale = v.stale, stale_at = $2
                 FROM jsonb_to_recordset($1::jsonb) AS v(id text, stale text)
                WHERE a.memory_id = v.id AND a.repo = $3 RETURNING a.memory_id AS id`,
              [JSON.stringify([...last].map(([id, stale]) => ({ id, stale }))), at, repo],
            )) as { id: string }[])
          : [];
        const markedIds = new Set(set.map((r) => r.id));
        let marked = 0;
        let unknown = 0;
        for (const x of marks) {
          if (markedIds.has(x.id)) marked++;
          else unknown++;
        }
        let cleared = 0;
        if (fresh.length) {
          const list = [...new Set(fresh)];
          const known = new Set(
            (
              await hh.orm
                .select({ id: a.memoryId })
                .from(a)
                .where(and(eq(a.repo, repo), inArray(a.memoryId, list)))
            ).map((r) => r.id),
          );
          const done = await hh.orm
            .update(a)
            .set({ stale: null, staleAt: null })
            .where(and(eq(a.repo, repo), inArray(a.memoryId, list), isNotNull(a.stale)))
            .returning({ id: a.memoryId });
          const clearedIds = new Set(done.map((r) => r.id));
          // Per entry of `fresh`, as on SQLite: a repeated id is cleared once, then finds nothing to clear.
          for (const id of fresh) {
            if (!known.has(id)) unknown++;
            else if (clearedIds.delete(id)) cleared++;
          }
        }
        return { marked, cleared, unknown };
      });
    },

    async staleAnchors(limit) {
      const rows = await h.orm
        .select({ memoryId: a.memoryId, repo: a.repo, commit: a.commitId, paths: a.paths, staleText: a.stale, rechecked: a.rechecked, evidence: a.evidence })
        .from(a)
        .where(isNotNull(a.stale))
        .orderBy(asc(a.staleAt), byte(a.memoryId), byte(a.repo))
        .limit(limit);
      return rows.map((r) => ({ ...r, paths: JSON.parse(r.paths), staleText: r.staleText! }));
    },

    async evidenceOf(memoryId) {
      const rows = await h.orm
        .select({ repo: a.repo, evidence: a.evidence })
        .from(a)
        .where(and(eq(a.memoryId, memoryId), isNotNull(a.evidence)))
        .orderBy(byte(a.repo));
      return rows.map((r) => ({ repo: r.repo, evidence: r.evidence! }));
    },

    async settleAnchor(memoryId, repo, staleText, outcome) {
      const where = and(eq(a.memoryId, memoryId), eq(a.repo, repo), eq(a.stale, staleText));
      if (outcome.kind === "delete") return (await h.orm.delete(a).where(where).returning({ id: a.memoryId })).length > 0;
      if (outcome.kind === "checked")
        return (await h.orm.update(a).set({ rechecked: outcome.rechecked }).where(where).returning({ id: a.memoryId })).length > 0;
      const next = outcome.anchor;
      const done = await h.orm
        .update(a)
        .set({ commitId: next.commit, paths: JSON.stringify(next.paths), stale: null, staleAt: null, rechecked: null, confirmedAt: next.at })
        .where(where)
        .returning({ id: a.memoryId });
      return done.length > 0;
    },
  };
}
