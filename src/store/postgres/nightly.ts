import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import type { NightlyMergeRow, NightlyRunRow, NightlyStore } from "../../core/nightly";
import { DECAY_FLOOR, DECAY_HALF_LIFE_DAYS } from "../../core/memories/tuning";
import type { MemoryRow } from "../../core/memories";
import type { PgHandle } from "./open";
import { reportingContention } from "./contention";

const DAY_MS = 86_400_000;

/** core/memories/strength.ts's effectiveStrength as PostgreSQL, `$now` being the parameter named. */
const effective = (now: string) =>
  `(strength * (${DECAY_FLOOR} + ${1 - DECAY_FLOOR} * power(0.5, greatest(0, ${now} - refreshed_at)::float8 / ${DAY_MS * DECAY_HALF_LIFE_DAYS})))`;

/** Bun's SQL client reads bigint as text: numbers back. */
const num = (v: unknown): number => (typeof v === "number" ? v : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));

const isUniqueViolation = (e: unknown) => {
  for (let cur: unknown = e, depth = 0; cur && depth < 4; cur = (cur as { cause?: unknown }).cause, depth++) {
    const c = cur as { code?: unknown; errno?: unknown };
    if (c.code === "23505" || c.errno === "23505") return true;
  }
  return false;
};

const mergeRow = (r: Record<string, unknown>): NightlyMergeRow => ({
  seq: num(r.seq),
  id: r.id as string,
  memoryType: r.memory_type as string,
  project: r.project as string | null,
  strength: num(r.strength),
  refreshedAt: num(r.refreshed_at),
  usedCount: num(r.used_count),
  linkCount: num(r.link_count),
});

const memoryRow = (r: Record<string, unknown>): MemoryRow => ({
  seq: num(r.seq),
  id: r.id as string,
  content: r.content as string,
  memoryType: r.memory_type as string,
  project: r.project as string | null,
  sourceAgent: r.source_agent as string,
  sourceAgentId: r.source_agent_id as string | null,
  sourceDomain: r.source_domain as string | null,
  sourceSession: r.source_session as string | null,
  privacy: r.privacy as string,
  createdAt: num(r.created_at),
  updatedAt: num(r.updated_at),
  refreshedAt: num(r.refreshed_at),
  strength: num(r.strength),
  shownCount: num(r.shown_count),
  usedCount: num(r.used_count),
  lastShownAt: numOrNull(r.last_shown_at),
  lastUsedAt: numOrNull(r.last_used_at),
  linkCount: num(r.link_count),
});

/**
 * nightly/ on PostgreSQL. drizzle for the ordinary statements; raw SQL (every
 * table named through the handle's schema) where one statement must decide
 * atomically (the run claim), for UPDATE ... FROM folds and for the decay
 * formula in ORDER BY.
 */
export function pgNightly(h: PgHandle): NightlyStore {
  const t = h.t;
  const S = h.schema;
  const runs = t.nightlyRuns;
  const q = (text: string, params: unknown[] = []) => h.sql.unsafe(text, params as never[]) as Promise<Record<string, unknown>[]>;
  const toRun = (r: typeof runs.$inferSelect): NightlyRunRow => ({ ...r, forced: r.forced === 1 });
  /** Several statements that must land together: inside a caller's transaction they join it. */
  const atomically = <T>(fn: (h: PgHandle) => Promise<T>): Promise<T> =>
    h.inTransaction ? fn(h) : (reportingContention(() => h.sql.begin((tx) => fn(h.bind(tx)))) as Promise<T>);
  return {
    async lastRun(day) {
      const [r] = await h.orm.select().from(runs).where(eq(runs.day, day)).orderBy(desc(runs.id)).limit(1);
      return r ? toRun(r) : null;
    },

    async startRun(run) {
      // One statement decides: refused when a newer run exists, or (unique index
      // nightly_runs_one_running) when the day is already running on another server.
      const rows = await q(
        `INSERT INTO ${S}.nightly_runs(day, status, forced, owner, started_at, heartbeat_at, digest)
           SELECT $1, 'running', $2, $3, $4, $4, $5
            WHERE NOT EXISTS (SELECT 1 FROM ${S}.nightly_runs WHERE day = $1 AND id > $6)
         ON CONFLICT DO NOTHING RETURNING id`,
        [run.day, run.forced ? 1 : 0, run.owner, run.now, run.digest, run.afterId],
      );
      return rows.length ? num(rows[0].id) : null;
    },

    async takeOverRun(seen, next) {
      try {
        const rows = await h.orm
          .update(runs)
          .set({
            status: "running",
            owner: next.owner,
            heartbeatAt: next.now,
            finishedAt: null,
            forced: next.forced ? 1 : 0,
            startedAt: next.startedAt,
            cursor: next.cursor,
            digest: next.digest,
          })
          .where(and(eq(runs.id, seen.id), eq(runs.owner, seen.owner), eq(runs.status, seen.status), eq(runs.heartbeatAt, seen.heartbeatAt)))
          .returning({ id: runs.id });
        return rows.length === 1;
      } catch (e) {
        // Another row of the day started running in between (the one-running index).
        if (isUniqueViolation(e)) return false;
        throw e;
      }
    },

    async saveRun(id, owner, p) {
      const rows = await h.orm
        .update(runs)
        .set({ cursor: p.cursor, digest: p.digest, heartbeatAt: p.now })
        .where(and(eq(runs.id, id), eq(runs.owner, owner), eq(runs.status, "running")))
        .returning({ id: runs.id });
      return rows.length === 1;
    },

    async heartbeat(id, owner, now) {
      const rows = await h.orm
        .update(runs)
        .set({ heartbeatAt: now })
        .where(and(eq(runs.id, id), eq(runs.owner, owner), eq(runs.status, "running")))
        .returning({ id: runs.id });
      return rows.length === 1;
    },

    async finishRun(id, owner, f) {
      const rows = await h.orm
        .update(runs)
        .set({ status: f.status, cursor: f.cursor, digest: f.digest, heartbeatAt: f.now, finishedAt: f.now })
        .where(and(eq(runs.id, id), eq(runs.owner, owner), eq(runs.status, "running")))
        .returning({ id: runs.id });
      return rows.length === 1;
    },

    async latestRuns(n) {
      return h.orm.select({ id: runs.id, status: runs.status, digest: runs.digest }).from(runs).orderBy(desc(runs.id)).limit(n);
    },

    async partialDays(since) {
      const rows = await q(
        `SELECT day FROM ${S}.nightly_runs r WHERE day >= $1 AND id = (SELECT max(id) FROM ${S}.nightly_runs WHERE day = r.day) AND status = 'partial' ORDER BY day`,
        [since],
      );
      return rows.map((r) => r.day as string);
    },

    async countDay(start, end, after) {
      const [r] = await q(
        `SELECT count(*) AS n FROM ${S}.memories
          WHERE memory_type <> 'learnings' AND ((created_at >= $1 AND created_at < $2) OR (updated_at >= $1 AND updated_at < $2))
            AND (coalesce(project, '') COLLATE "C", seq) > ($3 COLLATE "C", $4)`,
        [start, end, after[0], after[1]],
      );
      return num(r.n);
    },

    async dayRows(start, end, after, limit) {
      // COLLATE "C": the (project, seq) cursor must order as SQLite's BINARY does, whatever the database's collation.
      const rows = await q(
        `SELECT seq, id, content, memory_type, project, coalesce(project, '') AS pkey, created_at FROM ${S}.memories
          WHERE memory_type <> 'learnings' AND ((created_at >= $1 AND created_at < $2) OR (updated_at >= $1 AND updated_at < $2))
            AND (coalesce(project, '') COLLATE "C", seq) > ($3 COLLATE "C", $4)
          ORDER BY coalesce(project, '') COLLATE "C", seq LIMIT $5`,
        [start, end, after[0], after[1], limit],
      );
      return rows.map((r) => ({
        seq: num(r.seq),
        id: r.id as string,
        content: r.content as string,
        memoryType: r.memory_type as string,
        project: r.project as string | null,
        pkey: r.pkey as string,
        createdAt: num(r.created_at),
      }));
    },

    async mergeCandidates(start, end, session, after, limit) {
      const rows = await q(
        `SELECT seq, id, memory_type, project, strength, refreshed_at, used_count, link_count FROM ${S}.memories
          WHERE seq > $4 AND ((created_at >= $1 AND created_at < $2) OR (updated_at >= $1 AND updated_at < $2) OR source_session = $3)
          ORDER BY seq LIMIT $5`,
        [start, end, session, after, limit],
      );
      return rows.map(mergeRow);
    },

    async mergeRowsBySeq(seqs) {
      if (seqs.length === 0) return [];
      const m = t.memories;
      const rows = await h.orm
        .select({
          seq: m.seq,
          id: m.id,
          memoryType: m.memoryType,
          project: m.project,
          strength: m.strength,
          refreshedAt: m.refreshedAt,
          usedCount: m.usedCount,
          linkCount: m.linkCount,
        })
        .from(m)
        .where(inArray(m.seq, [...seqs]));
      return rows;
    },

    async nearest(seq, k, project) {
      // The query vector as a scalar subquery (an InitPlan): the HNSW index orders by it.
      const rows = await q(
        `SELECT v.seq, 1 - (v.embedding <=> (SELECT embedding FROM ${S}.memory_vec WHERE seq = $1)) AS similarity
           FROM ${S}.memory_vec v JOIN ${S}.memories m ON m.seq = v.seq
          WHERE coalesce(m.project, '') = coalesce($2::text, '')
          ORDER BY v.embedding <=> (SELECT embedding FROM ${S}.memory_vec WHERE seq = $1) LIMIT $3`,
        [seq, project, k],
      );
      return rows.map((r) => ({ seq: num(r.seq), similarity: num(r.similarity) }));
    },

    async vectorOf(seq) {
      const [r] = await h.orm.select({ e: t.memoryVec.embedding }).from(t.memoryVec).where(eq(t.memoryVec.seq, seq));
      return r ? Float32Array.from(r.e) : null;
    },

    async foldInto(keepId, dropId, maxStrength) {
      await atomically(async (x) => {
        const run = (text: string, params: unknown[]) => x.sql.unsafe(text, params as never[]);
        // updated_at stays: the content did not change, and the next night must not read it again.
        await run(
          `UPDATE ${S}.memories m SET
             shown_count = m.shown_count + d.shown_count,
             used_count = m.used_count + d.used_count,
             strength = least($3::float8, greatest(m.strength, d.strength)),
             last_shown_at = nullif(greatest(coalesce(m.last_shown_at, 0), coalesce(d.last_shown_at, 0)), 0),
             last_used_at = nullif(greatest(coalesce(m.last_used_at, 0), coalesce(d.last_used_at, 0)), 0),
             refreshed_at = greatest(m.refreshed_at, d.refreshed_at),
             created_at = least(m.created_at, d.created_at)
           FROM (SELECT * FROM ${S}.memories WHERE id = $2) AS d WHERE m.id = $1`,
          [keepId, dropId, maxStrength],
        );
        // Links follow the survivor (a link between the two disappears with the dropped one).
        await run(
          `INSERT INTO ${S}.links AS l (from_id, to_id, relationship, weight, created_at)
             SELECT $1, to_id, relationship, weight, created_at FROM ${S}.links WHERE from_id = $2 AND to_id <> $1
           ON CONFLICT (from_id, to_id, relationship) DO UPDATE SET weight = greatest(l.weight, excluded.weight)`,
          [keepId, dropId],
        );
        await run(
          `INSERT INTO ${S}.links AS l (from_id, to_id, relationship, weight, created_at)
             SELECT from_id, $1, relationship, weight, created_at FROM ${S}.links WHERE to_id = $2 AND from_id <> $1
           ON CONFLICT (from_id, to_id, relationship) DO UPDATE SET weight = greatest(l.weight, excluded.weight)`,
          [keepId, dropId],
        );
        await run(
          `INSERT INTO ${S}.memory_tags AS g (memory_id, tag, weight) SELECT $1, tag, weight FROM ${S}.memory_tags WHERE memory_id = $2
           ON CONFLICT (memory_id, tag) DO UPDATE SET weight = greatest(g.weight, excluded.weight)`,
          [keepId, dropId],
        );
        await run(`UPDATE ${S}.memory_events SET memory_id = $1 WHERE memory_id = $2`, [keepId, dropId]);
        // SQLite's UPDATE OR IGNORE: a session that saw both keeps its row for the survivor.
        await run(
          `UPDATE ${S}.recall_shown r SET memory_id = $1 WHERE memory_id = $2
             AND NOT EXISTS (SELECT 1 FROM ${S}.recall_shown o WHERE o.session_id = r.session_id AND o.memory_id = $1)`,
          [keepId, dropId],
        );
      });
    },

    async decayIgnored(p, dryRun) {
      const where = `shown_count >= $1 AND strength > $2
        AND id IN (SELECT memory_id FROM ${S}.memory_events WHERE kind = 'shown' AND at >= $3 AND at < $4)
        AND id NOT IN (SELECT memory_id FROM ${S}.memory_events WHERE kind = 'used' AND at >= $3)`;
      if (dryRun) return num((await q(`SELECT count(*) AS n FROM ${S}.memories WHERE ${where}`, [p.minShown, p.floor, p.start, p.end]))[0].n);
      const rows = await q(`UPDATE ${S}.memories SET strength = greatest($2, strength * $5) WHERE ${where} RETURNING id`, [
        p.minShown,
        p.floor,
        p.start,
        p.end,
        p.factor,
      ]);
      return rows.length;
    },

    async pruneCandidates(p) {
      const rows = await q(
        `SELECT id, seq FROM ${S}.memories WHERE memory_type <> 'learnings' AND used_count = 0 AND created_at < $2
           AND ${effective("$1")} < $3 AND id NOT IN (SELECT jsonb_array_elements_text($5::jsonb)) ORDER BY ${effective("$1")} LIMIT $4`,
        [p.now, p.before, p.floor, p.limit, JSON.stringify(p.exclude)],
      );
      return rows.map((r) => ({ id: r.id as string, seq: num(r.seq) }));
    },

    async droppedFragments() {
      const d = t.distillDropped;
      return h.orm.select({ id: d.id, reason: d.reason, content: d.content }).from(d).orderBy(asc(d.id));
    },

    async forgetDroppedFragments(lastId) {
      await h.orm.delete(t.distillDropped).where(sql`${t.distillDropped.id} <= ${lastId}`);
    },

    async recentLearnings(p) {
      const rows = await q(
        `SELECT * FROM ${S}.memories
          WHERE memory_type = 'learnings' AND (created_at >= $2 OR updated_at >= $2)
            AND ($3::text IS NULL OR project = $3 OR project IS NULL)
          ORDER BY ${effective("$1")} DESC, created_at DESC LIMIT $4`,
        [p.now, p.since, p.project, p.limit],
      );
      return rows.map(memoryRow);
    },

    async derivedFrom(ids) {
      if (ids.length === 0) return [];
      const l = t.links;
      return h.orm
        .select({ fromId: l.fromId, toId: l.toId })
        .from(l)
        .where(and(eq(l.relationship, "derived_from"), inArray(l.fromId, [...ids])))
        .orderBy(sql`${l.toId} COLLATE "C"`);
    },

    async indexCounts(top) {
      const [byType, projects, domains] = await Promise.all([
        q(`SELECT memory_type, count(*) AS n FROM ${S}.memories GROUP BY memory_type`),
        q(
          `SELECT project, count(*) AS memories, count(*) FILTER (WHERE memory_type = 'learnings') AS learnings FROM ${S}.memories GROUP BY project ORDER BY memories DESC LIMIT $1`,
          [top],
        ),
        q(`SELECT tag AS domain, count(*) AS memories FROM ${S}.memory_tags GROUP BY tag ORDER BY memories DESC, tag COLLATE "C" LIMIT $1`, [top]),
      ]);
      return {
        byType: byType.map((r) => ({ memoryType: r.memory_type as string, n: num(r.n) })),
        projects: projects.map((r) => ({ project: r.project as string | null, memories: num(r.memories), learnings: num(r.learnings) })),
        domains: domains.map((r) => ({ domain: r.domain as string, memories: num(r.memories) })),
      };
    },
  };
}
