import { and, asc, count, desc, eq, gt, gte, inArray, isNotNull, lte, or, sql, type SQL as Fragment } from "drizzle-orm";
import type { ExportRow, FullMemory, ListFilterSpec, ListRow, MemoriesBulkStore, MigrateTable } from "../../core/memories/store-bulk";
import { eventRecord, rowsOf } from "../../core/memories/store-bulk";
import { DEFAULT_DOMAIN } from "../../core/memories/tags";
import { DECAY_FLOOR, DECAY_HALF_LIFE_DAYS } from "../../core/memories/tuning";
import { invalid } from "../../errors";
import { byParams } from "./chunk";
import type { PgHandle } from "./open";
import { reportingContention } from "./contention";
import { dropSecondaryIndexes, rebuildIndexes, vacuumAnalyze } from "./migrate-bulk";

const DAY_MS = 86_400_000;
/** Rows per read while exporting: the snapshot is one transaction, read in keyset pages. */
const READ_PAGE = 1000;

const chunks = <T>(xs: T[], n: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
};

const toVector = (v: number[] | string | null | undefined): Float32Array | null => {
  if (v === null || v === undefined) return null;
  return Float32Array.from(typeof v === "string" ? (JSON.parse(v) as number[]) : v);
};

/** The bulk side of memories/ on PostgreSQL. */
export function pgMemoriesBulk(h: PgHandle): MemoriesBulkStore {
  const { memories: m, memoryVec, links, memoryTags, segments, memoryEvents, meta, memoryPrimaryDomain: pd, memoryHistory, memoryAnchors } = h.t;

  /** Runs `fn` in a transaction: the caller's, when this handle is bound to one. */
  const inTx = <T>(fn: (th: PgHandle) => Promise<T>): Promise<T> =>
    h.inTransaction ? fn(h) : (reportingContention(() => h.sql.begin((tx) => fn(h.bind(tx)))) as Promise<T>);
  /**
   * Whether the re-embed is still where the caller left it, holding row locks
   * on the two meta keys until the transaction ends: a switch of embedder on
   * another server waits for this batch, or this batch sees it.
   */
  const reembedStillAt = async (th: PgHandle, expect: { cursor: string; embedderId: string }): Promise<boolean> => {
    const state = await th.orm
      .select({ key: meta.key, value: meta.value })
      .from(meta)
      .where(inArray(meta.key, ["embedder_id", "reembed_cursor"]))
      .for("update");
    const get = (k: string) => state.find((r) => r.key === k)?.value ?? null;
    return get("reembed_cursor") === expect.cursor && get("embedder_id") === expect.embedderId;
  };

  const domainSql = sql<string>`coalesce((SELECT ${pd.domain} FROM ${pd} WHERE ${pd.memoryId} = ${m.id}), ${DEFAULT_DOMAIN})`;
  const effSql = (now: number) =>
    sql<number>`(${m.strength} * (${DECAY_FLOOR}::float8 + ${1 - DECAY_FLOOR}::float8 * power(0.5, greatest(0, ${now}::bigint - ${m.refreshedAt})::float8 / ${DAY_MS * DECAY_HALF_LIFE_DAYS}::float8)))`;

  const whereOf = (f: ListFilterSpec, now: number): Fragment | undefined => {
    const parts: (Fragment | undefined)[] = [];
    if (f.project !== null) parts.push(eq(m.project, f.project));
    if (f.type !== null) parts.push(eq(m.memoryType, f.type));
    if (f.domain !== null) {
      // "general" is also every memory without a tag; other domains come straight from their index.
      parts.push(
        f.domain === DEFAULT_DOMAIN
          ? sql`${domainSql} = ${f.domain}`
          : inArray(m.id, h.orm.select({ id: pd.memoryId }).from(pd).where(eq(pd.domain, f.domain))),
      );
    }
    if (f.from !== null) parts.push(gte(m.createdAt, f.from));
    if (f.to !== null) parts.push(lte(m.createdAt, f.to));
    if (f.minStrength !== null) parts.push(sql`${effSql(now)} >= ${f.minStrength}::float8`);
    if (f.usage === "never") parts.push(and(eq(m.shownCount, 0), eq(m.usedCount, 0)));
    else if (f.usage === "shown") parts.push(gt(m.shownCount, 0));
    else if (f.usage === "used") parts.push(gt(m.usedCount, 0));
    // One JSON parameter, however many ids (a parameter per id could pass PostgreSQL's 65,535).
    if (f.ids !== null) parts.push(sql`${m.id} IN (SELECT jsonb_array_elements_text(${JSON.stringify(f.ids)}::jsonb))`);
    return parts.length ? and(...parts) : undefined;
  };

  const listColumns = (now: number, previewChars: number) => ({
    seq: m.seq,
    id: m.id,
    head: sql<string>`substr(${m.content}, 1, ${Math.trunc(previewChars)}::int)`,
    length: sql<number>`length(${m.content})::int`,
    memoryType: m.memoryType,
    project: m.project,
    domain: domainSql,
    sourceAgent: m.sourceAgent,
    createdAt: m.createdAt,
    strength: m.strength,
    effectiveStrength: sql<number>`${effSql(now)}::float8`,
    shownCount: m.shownCount,
    usedCount: m.usedCount,
    linkCount: m.linkCount,
  });

  const getMeta = async (th: PgHandle, key: string): Promise<string | null> =>
    (await th.orm.select({ value: meta.value }).from(meta).where(eq(meta.key, key)))[0]?.value ?? null;
  const setMeta = (th: PgHandle, key: string, value: string) =>
    th.orm.insert(meta).values({ key, value }).onConflictDoUpdate({ target: meta.key, set: { value } });

  const memoryColumns = {
    seq: m.seq,
    id: m.id,
    content: m.content,
    memory_type: m.memoryType,
    project: m.project,
    source_agent: m.sourceAgent,
    source_agent_id: m.sourceAgentId,
    source_domain: m.sourceDomain,
    source_session: m.sourceSession,
    privacy: m.privacy,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
    refreshed_at: m.refreshedAt,
    strength: m.strength,
    shown_count: m.shownCount,
    used_count: m.usedCount,
    last_shown_at: m.lastShownAt,
    last_used_at: m.lastUsedAt,
    created_by: m.createdBy,
  };

  /** Memories with their tags (and vectors), `seq > after` in seq order. */
  const readMemories = async (th: PgHandle, after: number, limit: number, vectors: boolean): Promise<FullMemory[]> => {
    const rows = await th.orm.select(memoryColumns).from(m).where(gt(m.seq, after)).orderBy(asc(m.seq)).limit(limit);
    if (rows.length === 0) return [];
    const ids = rows.map((r) => r.id);
    const tags = await th.orm
      .select({ memoryId: memoryTags.memoryId, tag: memoryTags.tag, weight: memoryTags.weight })
      .from(memoryTags)
      .where(inArray(memoryTags.memoryId, ids))
      .orderBy(asc(memoryTags.memoryId), desc(memoryTags.weight), sql`${memoryTags.tag} COLLATE "C"`);
    const tagsById = new Map<string, { tag: string; weight: number }[]>();
    for (const t of tags) tagsById.set(t.memoryId, [...(tagsById.get(t.memoryId) ?? []), { tag: t.tag, weight: t.weight }]);
    const vecBySeq = new Map<number, Float32Array | null>();
    if (vectors) {
      const vecs = await th.orm
        .select({ seq: memoryVec.seq, embedding: memoryVec.embedding })
        .from(memoryVec)
        .where(
          inArray(
            memoryVec.seq,
            rows.map((r) => r.seq),
          ),
        );
      for (const v of vecs) vecBySeq.set(v.seq, toVector(v.embedding));
    }
    return rows.map((r) => ({ ...r, tags: tagsById.get(r.id) ?? [], vector: vecBySeq.get(r.seq) ?? null }));
  };

  const linkColumns = { from_id: links.fromId, to_id: links.toId, relationship: links.relationship, weight: links.weight, created_at: links.createdAt };
  const segmentColumns = { key: segments.key, session_id: segments.sessionId, memory_count: segments.memoryCount, created_at: segments.createdAt };
  const eventColumns = { memory_id: memoryEvents.memoryId, event: memoryEvents.kind, at: memoryEvents.at, detail: memoryEvents.detail };
  const historyColumns = {
    memory_id: memoryHistory.memoryId,
    version: memoryHistory.version,
    content: memoryHistory.content,
    memory_type: memoryHistory.memoryType,
    project: memoryHistory.project,
    reason: memoryHistory.reason,
    source_id: memoryHistory.sourceId,
    replaced_at: memoryHistory.replacedAt,
  };
  const anchorColumns = {
    memory_id: memoryAnchors.memoryId,
    repo: memoryAnchors.repo,
    branch: memoryAnchors.branch,
    commit_id: memoryAnchors.commitId,
    paths: memoryAnchors.paths,
    anchored_at: memoryAnchors.anchoredAt,
    stale: memoryAnchors.stale,
    stale_at: memoryAnchors.staleAt,
    evidence: memoryAnchors.evidence,
    rechecked: memoryAnchors.rechecked,
    confirmed_at: memoryAnchors.confirmedAt,
  };

  /** Writes rows of every kind (memories first); call inside a transaction. `keepSeq`: migrate carries seq values over. */
  const insertAll = async (th: PgHandle, rows: ExportRow[], keepSeq: boolean): Promise<{ seqs: number[]; links: number }> => {
    const mems = rows.flatMap((r) => (r.kind === "memory" ? [r.memory] : []));
    const seqs: number[] = [];
    const values = mems.map((x) => ({
      ...(keepSeq ? { seq: x.seq! } : {}),
      id: x.id,
      content: x.content,
      memoryType: x.memory_type,
      project: x.project,
      sourceAgent: x.source_agent,
      sourceAgentId: x.source_agent_id,
      sourceDomain: x.source_domain,
      sourceSession: x.source_session,
      privacy: x.privacy,
      createdAt: x.created_at,
      updatedAt: x.updated_at,
      refreshedAt: x.refreshed_at,
      strength: x.strength,
      shownCount: x.shown_count,
      usedCount: x.used_count,
      lastShownAt: x.last_shown_at,
      lastUsedAt: x.last_used_at,
      createdBy: x.created_by ?? null,
    }));
    let at = 0;
    for (const part of byParams(values)) {
      const inserted = await th.orm.insert(m).values(part).returning({ seq: m.seq });
      // INSERT ... RETURNING gives rows in VALUES order.
      const partSeqs = inserted.map((r) => r.seq);
      seqs.push(...partSeqs);
      const partMems = mems.slice(at, at + part.length);
      at += part.length;
      const vecs = partMems.flatMap((x, i) => (x.vector ? [{ seq: partSeqs[i], embedding: Array.from(x.vector) }] : []));
      for (const vp of byParams(vecs)) await th.orm.insert(memoryVec).values(vp);
      const tags = partMems.flatMap((x) => x.tags.map((t) => ({ memoryId: x.id, tag: t.tag, weight: t.weight })));
      for (const tp of byParams(tags)) await th.orm.insert(memoryTags).values(tp);
    }
    let linkCount = 0;
    const of = <K extends ExportRow["kind"]>(kind: K) => rows.filter((r): r is Extract<ExportRow, { kind: K }> => r.kind === kind);
    for (const part of byParams(
      of("link").map(({ link: l }) => ({ fromId: l.from_id, toId: l.to_id, relationship: l.relationship, weight: l.weight, createdAt: l.created_at })),
    )) {
      const added = await th.orm.insert(links).values(part).onConflictDoNothing().returning({ fromId: links.fromId });
      linkCount += added.length;
    }
    for (const part of byParams(
      of("segment").map(({ segment: g }) => ({ key: g.key, sessionId: g.session_id, memoryCount: g.memory_count, createdAt: g.created_at })),
    )) {
      await th.orm.insert(segments).values(part).onConflictDoNothing();
    }
    for (const part of byParams(of("event").map(({ event: e }) => ({ memoryId: e.memory_id, kind: e.event, at: e.at, detail: e.detail ?? null })))) {
      await th.orm.insert(memoryEvents).values(part);
    }
    const history = of("history").map(({ history: v }) => ({
      memoryId: v.memory_id,
      version: v.version,
      content: v.content,
      memoryType: v.memory_type,
      project: v.project ?? null,
      reason: v.reason,
      sourceId: v.source_id ?? null,
      replacedAt: v.replaced_at,
    }));
    for (const part of byParams(history)) {
      await th.orm
        .insert(memoryHistory)
        .values(part)
        .onConflictDoUpdate({
          target: [memoryHistory.memoryId, memoryHistory.version],
          set: {
            content: sql`excluded.content`,
            memoryType: sql`excluded.memory_type`,
            project: sql`excluded.project`,
            reason: sql`excluded.reason`,
            sourceId: sql`excluded.source_id`,
            replacedAt: sql`excluded.replaced_at`,
          },
        });
    }
    const anchors = of("anchor").map(({ anchor: a }) => ({
      memoryId: a.memory_id,
      repo: a.repo,
      branch: a.branch ?? null,
      commitId: a.commit_id ?? "",
      paths: a.paths,
      anchoredAt: a.anchored_at,
      stale: a.stale ?? null,
      staleAt: a.stale_at ?? null,
      evidence: a.evidence ?? null,
      rechecked: a.rechecked ?? null,
      confirmedAt: a.confirmed_at ?? null,
    }));
    for (const part of byParams(anchors)) {
      await th.orm
        .insert(memoryAnchors)
        .values(part)
        .onConflictDoUpdate({
          target: [memoryAnchors.memoryId, memoryAnchors.repo],
          set: {
            branch: sql`excluded.branch`,
            commitId: sql`excluded.commit_id`,
            paths: sql`excluded.paths`,
            anchoredAt: sql`excluded.anchored_at`,
            stale: sql`excluded.stale`,
            staleAt: sql`excluded.stale_at`,
            evidence: sql`excluded.evidence`,
            rechecked: sql`excluded.rechecked`,
            confirmedAt: sql`excluded.confirmed_at`,
          },
        });
    }
    return { seqs, links: linkCount };
  };

  /** Reads for migrate when PostgreSQL is the source: memories and events by key, the rest by primary-key order and offset. */
  const migrateReaders: Record<MigrateTable, (th: PgHandle, after: number, limit: number) => Promise<{ last: number | null; rows: ExportRow[] }>> = {
    memories: async (th, after, limit) => {
      const rows = await readMemories(th, after, limit, true);
      return { last: rows.length ? rows[rows.length - 1].seq! : null, rows: rows.map((memory) => ({ kind: "memory", memory })) };
    },
    events: async (th, after, limit) => {
      const rows = await th.orm
        .select({ k: memoryEvents.id, ...eventColumns })
        .from(memoryEvents)
        .where(gt(memoryEvents.id, after))
        .orderBy(asc(memoryEvents.id))
        .limit(limit);
      return { last: rows.length ? rows[rows.length - 1].k : null, rows: rows.map(({ k: _k, ...event }) => ({ kind: "event", event: eventRecord(event) })) };
    },
    links: async (th, after, limit) =>
      byOffset(
        after,
        (await th.orm.select(linkColumns).from(links).orderBy(asc(links.fromId), asc(links.toId), asc(links.relationship)).offset(after).limit(limit)).map(
          (link) => ({ kind: "link", link }),
        ),
      ),
    segments: async (th, after, limit) =>
      byOffset(
        after,
        (await th.orm.select(segmentColumns).from(segments).orderBy(asc(segments.key)).offset(after).limit(limit)).map((segment) => ({
          kind: "segment",
          segment,
        })),
      ),
    history: async (th, after, limit) =>
      byOffset(
        after,
        (
          await th.orm.select(historyColumns).from(memoryHistory).orderBy(asc(memoryHistory.memoryId), asc(memoryHistory.version)).offset(after).limit(limit)
        ).map((history) => ({ kind: "history", history })),
      ),
    anchors: async (th, after, limit) =>
      byOffset(
        after,
        (await th.orm.select(anchorColumns).from(memoryAnchors).orderBy(asc(memoryAnchors.memoryId), asc(memoryAnchors.repo)).offset(after).limit(limit)).map(
          (anchor) => ({ kind: "anchor", anchor }),
        ),
      ),
  };
  const byOffset = (after: number, rows: ExportRow[]) => ({ last: rows.length ? after + rows.length : null, rows });

  return {
    async listPage(f, req): Promise<ListRow[]> {
      const key = req.sort === "newest" ? m.createdAt : m.strength;
      const keyset = req.after ? sql`(${key}, ${m.seq}) < (${req.after.key}, ${req.after.seq}::bigint)` : undefined;
      return h.orm
        .select(listColumns(req.now, req.previewChars))
        .from(m)
        .where(and(whereOf(f, req.now), keyset))
        .orderBy(desc(key), desc(m.seq))
        .limit(req.limit);
    },

    async listRows(seqs, now, previewChars) {
      if (seqs.length === 0) return [];
      return h.orm.select(listColumns(now, previewChars)).from(m).where(inArray(m.seq, seqs));
    },

    async countSelected(f, now) {
      const [r] = await h.orm.select({ n: count() }).from(m).where(whereOf(f, now));
      return r.n;
    },

    async filterIds(ids, f, now) {
      if (ids.length === 0) return [];
      return h.orm
        .select({ seq: m.seq, id: m.id })
        .from(m)
        .where(and(inArray(m.id, ids), whereOf(f, now)));
    },

    async deleteSelected(f, now, onlySeqs, confirm) {
      return inTx(async (th) => {
        if (onlySeqs && onlySeqs.length === 0) return confirm === 0 ? { deleted: [], linksRemoved: 0 } : { count: 0 };
        const where = and(whereOf(f, now), onlySeqs ? inArray(m.seq, onlySeqs) : undefined);
        // FOR UPDATE: a concurrent writer on another server cannot change the selection between the count and the delete.
        const rows = await th.orm.select({ seq: m.seq, id: m.id }).from(m).where(where).for("update");
        if (rows.length !== confirm) return { count: rows.length };
        if (rows.length === 0) return { deleted: rows, linksRemoved: 0 };
        const ids = rows.map((r) => r.id);
        const selected = th.orm.select({ id: m.id }).from(m).where(where);
        const [links_] = await th.orm
          .select({ n: count() })
          .from(links)
          .where(or(inArray(links.fromId, selected), inArray(links.toId, selected)));
        const linksRemoved = links_.n;
        // Links, tags, vectors, anchors and versions cascade.
        for (const part of chunks(ids, 5000)) await th.orm.delete(m).where(inArray(m.id, part));
        return { deleted: rows, linksRemoved };
      });
    },

    async facets(scope = null) {
      // Within a scope: its projects, and primary domains of its memories only.
      const inScope = scope === null ? undefined : sql`${m.project} IN (SELECT jsonb_array_elements_text(${JSON.stringify(scope)}::jsonb))`;
      const projects = await h.orm
        .select({ name: sql<string>`${m.project}`, count: count() })
        .from(m)
        .where(and(isNotNull(m.project), inScope))
        .groupBy(m.project)
        .orderBy(desc(count()), sql`${m.project} COLLATE "C"`)
        .limit(500);
      const domains = await (inScope === undefined
        ? h.orm.select({ name: pd.domain, count: count() }).from(pd)
        : h.orm.select({ name: pd.domain, count: count() }).from(pd).innerJoin(m, eq(m.id, pd.memoryId)).where(inScope)
      )
        .groupBy(pd.domain)
        .orderBy(desc(count()), sql`${pd.domain} COLLATE "C"`)
        .limit(500);
      return { projects, domains };
    },

    async countMemories(afterSeq) {
      const [r] = await h.orm
        .select({ n: count() })
        .from(m)
        .where(afterSeq === undefined ? undefined : gt(m.seq, afterSeq));
      return r.n;
    },

    async embedderState() {
      const rows = await h.orm
        .select({ key: meta.key, value: meta.value })
        .from(meta)
        .where(inArray(meta.key, ["embedder_id", "reembed_cursor"]));
      const get = (k: string) => rows.find((r) => r.key === k)?.value ?? null;
      return { embedderId: get("embedder_id"), reembedCursor: get("reembed_cursor") };
    },

    async exportRows(opts, emit) {
      // One REPEATABLE READ transaction is the snapshot: servers keep writing, the export sees one moment.
      const run = async (th: PgHandle) => {
        if (!h.inTransaction) await th.sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY`;
        for (let after = 0; ; ) {
          const page = await readMemories(th, after, READ_PAGE, opts.vectors);
          if (page.length === 0) break;
          for (const { seq: _seq, ...memory } of page) await emit({ kind: "memory", memory: { ...memory, vector: opts.vectors ? memory.vector : null } });
          after = page[page.length - 1].seq!;
        }
        // SQLite's export writes links in insertion order; PostgreSQL has none: key order is stable.
        for (const link of await th.orm
          .select(linkColumns)
          .from(links)
          .orderBy(asc(links.createdAt), asc(links.fromId), asc(links.toId), asc(links.relationship)))
          await emit({ kind: "link", link });
        for (const segment of await th.orm.select(segmentColumns).from(segments).orderBy(asc(segments.key))) await emit({ kind: "segment", segment });
        for (let after = 0; ; ) {
          const page = await th.orm
            .select({ k: memoryEvents.id, ...eventColumns })
            .from(memoryEvents)
            .where(gt(memoryEvents.id, after))
            .orderBy(asc(memoryEvents.id))
            .limit(READ_PAGE * 10);
          if (page.length === 0) break;
          for (const { k: _k, ...event } of page) await emit({ kind: "event", event: eventRecord(event) });
          after = page[page.length - 1].k;
        }
        for (const history of await th.orm
          .select(historyColumns)
          .from(memoryHistory)
          .orderBy(sql`${memoryHistory.memoryId} COLLATE "C"`, asc(memoryHistory.version)))
          await emit({ kind: "history", history });
        for (const anchor of await th.orm
          .select(anchorColumns)
          .from(memoryAnchors)
          .orderBy(sql`${memoryAnchors.memoryId} COLLATE "C"`, sql`${memoryAnchors.repo} COLLATE "C"`))
          await emit({ kind: "anchor", anchor });
        // Identity lives in the database here: in the same snapshot. Global scope first, then agents, names in code-point order (as the folder lists them).
        const id = th.t.identitySections;
        for (const r of await th.orm
          .select({ scope: id.scope, name: id.name, body: id.body })
          .from(id)
          .orderBy(sql`${id.scope} COLLATE "C"`, sql`${id.name} COLLATE "C"`)) {
          await emit({ kind: "identity", identity: { agent: r.scope === "" ? null : r.scope, name: r.name, body: r.body } });
        }
      };
      await inTx(run);
    },

    async importRows(data, embedderId) {
      return inTx(async (th) => {
        // Two imports at once on two servers: the lock makes the emptiness check hold until commit.
        await th.sql`SELECT pg_advisory_xact_lock(hashtextextended(${`memsvc:${h.schema}:import`}, 0))`;
        const [r] = await th.orm.select({ n: count() }).from(m);
        if (r.n > 0) throw invalid(`the database at ${h.location} (schema ${h.schema}) already holds memories; import into an empty schema`);
        const rows = rowsOf(data);
        await th.orm.insert(meta).values({ key: "embedder_id", value: embedderId }).onConflictDoNothing();
        return insertAll(th, rows, false);
      });
    },

    async copyTo() {
      // No file to copy: backup on PostgreSQL is a logical export (core), or pg_dump.
      return false;
    },

    async reembedRows(afterSeq, limit) {
      return h.orm.select({ seq: m.seq, content: m.content, project: m.project }).from(m).where(gt(m.seq, afterSeq)).orderBy(asc(m.seq)).limit(limit);
    },

    async applyReembed(expect, vectors, cursor) {
      return inTx(async (th) => {
        if (!(await reembedStillAt(th, expect))) return false;
        if (vectors.length) {
          // Only memories still there: a vector of a deleted memory would break the foreign key.
          const alive = new Set(
            (
              await th.orm
                .select({ seq: m.seq })
                .from(m)
                .where(
                  inArray(
                    m.seq,
                    vectors.map((v) => v.seq),
                  ),
                )
            ).map((r) => r.seq),
          );
          const rows = vectors.filter((v) => alive.has(v.seq)).map((v) => ({ seq: v.seq, embedding: Array.from(v.vector) }));
          if (rows.length)
            await th.orm
              .insert(memoryVec)
              .values(rows)
              .onConflictDoUpdate({ target: memoryVec.seq, set: { embedding: sql`excluded.embedding` } });
        }
        await setMeta(th, "reembed_cursor", cursor);
        return true;
      });
    },

    async finishReembed(expect) {
      return inTx(async (th) => {
        if (!(await reembedStillAt(th, expect))) return false;
        await th.orm.delete(meta).where(eq(meta.key, "reembed_cursor"));
        return true;
      });
    },

    async seqsBetween(from, to) {
      const rows = await h.orm
        .select({ seq: m.seq })
        .from(m)
        .where(and(gte(m.seq, from), lte(m.seq, to)))
        .orderBy(asc(m.seq));
      return rows.map((r) => r.seq);
    },

    async migrateRead(table, after, limit) {
      const r = await inTx((th) => migrateReaders[table](th, after, limit));
      return { table, ...r };
    },

    async migrateCursor() {
      return getMeta(h, "migrate_cursor");
    },

    async migrateWrite(rows, cursor, opts) {
      // A bulk load: secondary indexes go for the copy and are built once at
      // its end, before the cursor says complete (see dropSecondaryIndexes).
      if (opts.finish) await rebuildIndexes(h, getMeta);
      await inTx(async (th) => {
        // A crash loses at most the last batches, cursor with them (one
        // transaction): a re-run copies them again. So no wait for each flush.
        await th.sql.unsafe("SET LOCAL synchronous_commit = off");
        if (!opts.finish && rows.length > 0) await dropSecondaryIndexes(th, getMeta, setMeta);
        await insertAll(th, rows, true);
        await setMeta(th, "migrate_cursor", cursor);
        if (opts.embedderId) await setMeta(th, "embedder_id", opts.embedderId);
        if (opts.finish) {
          // Rows came with their seq: the identity's sequence must continue after the largest, or the next insert collides.
          await th.sql.unsafe(`SELECT setval(pg_get_serial_sequence('${h.schema}.memories', 'seq'), greatest((SELECT max(seq) FROM ${h.schema}.memories), 1))`);
        }
      });
      if (opts.finish && !h.inTransaction) await vacuumAnalyze(h);
    },
  };
}
