import type { NightlyMergeRow, NightlyRunRow, NightlyStore } from "../../core/nightly";
import { effectiveStrengthSql } from "./strength";
import { fromSql } from "../../core/search/recent";
import type { SqliteHandle } from "./storage";

interface RunSql {
  id: number;
  day: string;
  status: string;
  forced: number;
  owner: string;
  started_at: number;
  heartbeat_at: number;
  finished_at: number | null;
  cursor: string;
  digest: string;
}

const toRun = (r: RunSql): NightlyRunRow => ({
  id: r.id,
  day: r.day,
  status: r.status,
  forced: r.forced === 1,
  owner: r.owner,
  startedAt: r.started_at,
  heartbeatAt: r.heartbeat_at,
  finishedAt: r.finished_at,
  cursor: r.cursor,
  digest: r.digest,
});

const MERGE_COLUMNS = "seq, id, memory_type AS memoryType, project, strength, refreshed_at AS refreshedAt, used_count AS usedCount, link_count AS linkCount";

/** The day's memories for the learn step: learnings excluded (no learnings of learnings). */
const DAY_FILTER = `memory_type != 'learnings'
  AND ((created_at >= :start AND created_at < :end) OR (updated_at >= :start AND updated_at < :end))`;

const isUniqueViolation = (e: unknown) => (e as { code?: unknown }).code === "SQLITE_CONSTRAINT_UNIQUE";

/** nightly/ on SQLite. Statements go through `query` (bun:sqlite caches them per connection). */
export function sqliteNightly(h: SqliteHandle): NightlyStore {
  const db = h.sqlite;
  return {
    async lastRun(day) {
      const r = db.query<RunSql, [string]>("SELECT * FROM nightly_runs WHERE day = ? ORDER BY id DESC LIMIT 1").get(day);
      return r ? toRun(r) : null;
    },

    startRun(run) {
      // One statement decides: refused when a newer run exists, or (unique index
      // nightly_runs_one_running) when the day is already running.
      return h.write(
        () =>
          db
            .query<{ id: number }, { day: string; forced: number; owner: string; now: number; digest: string; after: number }>(
              `INSERT INTO nightly_runs(day, status, forced, owner, started_at, heartbeat_at, digest)
                 SELECT :day, 'running', :forced, :owner, :now, :now, :digest
                  WHERE NOT EXISTS (SELECT 1 FROM nightly_runs WHERE day = :day AND id > :after)
               ON CONFLICT DO NOTHING RETURNING id`,
            )
            .get({ day: run.day, forced: run.forced ? 1 : 0, owner: run.owner, now: run.now, digest: run.digest, after: run.afterId })?.id ?? null,
      );
    },

    takeOverRun(seen, next) {
      return h.write(() => {
        try {
          return (
            db.run(
              `UPDATE nightly_runs SET status = 'running', owner = :owner, heartbeat_at = :now, finished_at = NULL, forced = :forced,
                   started_at = :startedAt, cursor = :cursor, digest = :digest
                 WHERE id = :id AND owner = :seenOwner AND status = :seenStatus AND heartbeat_at = :seenHeartbeat`,
              {
                owner: next.owner,
                now: next.now,
                forced: next.forced ? 1 : 0,
                startedAt: next.startedAt,
                cursor: next.cursor,
                digest: next.digest,
                id: seen.id,
                seenOwner: seen.owner,
                seenStatus: seen.status,
                seenHeartbeat: seen.heartbeatAt,
              } as never,
            ).changes === 1
          );
        } catch (e) {
          // Another row of the day started running in between (the one-running index).
          if (isUniqueViolation(e)) return false;
          throw e;
        }
      });
    },

    saveRun(id, owner, p) {
      return h.write(
        () =>
          db.run("UPDATE nightly_runs SET cursor = ?, digest = ?, heartbeat_at = ? WHERE id = ? AND owner = ? AND status = 'running'", [
            p.cursor,
            p.digest,
            p.now,
            id,
            owner,
          ]).changes === 1,
      );
    },

    heartbeat(id, owner, now) {
      return h.write(
        () => db.run("UPDATE nightly_runs SET heartbeat_at = ? WHERE id = ? AND owner = ? AND status = 'running'", [now, id, owner]).changes === 1,
      );
    },

    finishRun(id, owner, f) {
      return h.write(
        () =>
          db.run(
            "UPDATE nightly_runs SET status = ?, cursor = ?, digest = ?, heartbeat_at = ?, finished_at = ? WHERE id = ? AND owner = ? AND status = 'running'",
            [f.status, f.cursor, f.digest, f.now, f.now, id, owner],
          ).changes === 1,
      );
    },

    async latestRuns(n) {
      return db.query<{ id: number; status: string; digest: string }, [number]>("SELECT id, status, digest FROM nightly_runs ORDER BY id DESC LIMIT ?").all(n);
    },

    async partialDays(since) {
      return db
        .query<{ day: string }, [string]>(
          "SELECT day FROM nightly_runs r WHERE day >= ? AND id = (SELECT max(id) FROM nightly_runs WHERE day = r.day) AND status = 'partial' ORDER BY day",
        )
        .all(since)
        .map((r) => r.day);
    },

    async countDay(start, end, after) {
      return db
        .query<{ n: number }, { start: number; end: number; key: string; seq: number }>(
          `SELECT count(*) AS n FROM memories WHERE ${DAY_FILTER} AND (coalesce(project, ''), seq) > (:key, :seq)`,
        )
        .get({ start, end, key: after[0], seq: after[1] })!.n;
    },

    async dayRows(start, end, after, limit) {
      return db
        .query<
          { seq: number; id: string; content: string; memoryType: string; project: string | null; pkey: string; createdAt: number },
          { start: number; end: number; key: string; seq: number; limit: number }
        >(
          `SELECT seq, id, content, memory_type AS memoryType, project, coalesce(project, '') AS pkey, created_at AS createdAt FROM memories
            WHERE ${DAY_FILTER} AND (coalesce(project, ''), seq) > (:key, :seq)
            ORDER BY pkey, seq LIMIT :limit`,
        )
        .all({ start, end, key: after[0], seq: after[1], limit });
    },

    async mergeCandidates(start, end, session, after, limit) {
      return db
        .query<NightlyMergeRow, { start: number; end: number; session: string; after: number; limit: number }>(
          `SELECT ${MERGE_COLUMNS} FROM memories
            WHERE seq > :after AND ((created_at >= :start AND created_at < :end) OR (updated_at >= :start AND updated_at < :end) OR source_session = :session)
            ORDER BY seq LIMIT :limit`,
        )
        .all({ start, end, session, after, limit });
    },

    async mergeRowsBySeq(seqs) {
      if (seqs.length === 0) return [];
      return db
        .query<NightlyMergeRow, [string]>(`SELECT ${MERGE_COLUMNS} FROM memories WHERE seq IN (SELECT value FROM json_each(?))`)
        .all(JSON.stringify(seqs));
    },

    async vectorOf(seq) {
      const r = db.query<{ embedding: Uint8Array }, [number]>("SELECT embedding FROM memory_vec WHERE rowid = ?").get(seq);
      return r ? new Float32Array(r.embedding.buffer.slice(r.embedding.byteOffset, r.embedding.byteOffset + r.embedding.byteLength)) : null;
    },

    foldInto(keepId, dropId, maxStrength) {
      return h.write(() =>
        db.transaction(() => {
          // updated_at stays: the content did not change, and the next night must not read it again.
          db.run(
            `UPDATE memories SET
               shown_count = memories.shown_count + d.shown_count,
               used_count = memories.used_count + d.used_count,
               strength = min(?3, max(memories.strength, d.strength)),
               last_shown_at = nullif(max(coalesce(memories.last_shown_at, 0), coalesce(d.last_shown_at, 0)), 0),
               last_used_at = nullif(max(coalesce(memories.last_used_at, 0), coalesce(d.last_used_at, 0)), 0),
               refreshed_at = max(memories.refreshed_at, d.refreshed_at),
               created_at = min(memories.created_at, d.created_at)
             FROM (SELECT * FROM memories WHERE id = ?2) AS d WHERE memories.id = ?1`,
            [keepId, dropId, maxStrength],
          );
          // Links follow the survivor (a link between the two disappears with the dropped one).
          db.run(
            `INSERT INTO links(from_id, to_id, relationship, weight, created_at)
               SELECT ?1, to_id, relationship, weight, created_at FROM links WHERE from_id = ?2 AND to_id != ?1
             ON CONFLICT(from_id, to_id, relationship) DO UPDATE SET weight = max(weight, excluded.weight)`,
            [keepId, dropId],
          );
          db.run(
            `INSERT INTO links(from_id, to_id, relationship, weight, created_at)
               SELECT from_id, ?1, relationship, weight, created_at FROM links WHERE to_id = ?2 AND from_id != ?1
             ON CONFLICT(from_id, to_id, relationship) DO UPDATE SET weight = max(weight, excluded.weight)`,
            [keepId, dropId],
          );
          db.run(
            `INSERT INTO memory_tags(memory_id, tag, weight) SELECT ?1, tag, weight FROM memory_tags WHERE memory_id = ?2
             ON CONFLICT(memory_id, tag) DO UPDATE SET weight = max(weight, excluded.weight)`,
            [keepId, dropId],
          );
          db.run("UPDATE memory_events SET memory_id = ? WHERE memory_id = ?", [keepId, dropId]);
          db.run("UPDATE OR IGNORE recall_shown SET memory_id = ? WHERE memory_id = ?", [keepId, dropId]);
        })(),
      );
    },

    decayIgnored(p, dryRun) {
      const where = `shown_count >= :minShown AND strength > :floor
        AND id IN (SELECT memory_id FROM memory_events WHERE kind = 'shown' AND at >= :start AND at < :end)
        AND id NOT IN (SELECT memory_id FROM memory_events WHERE kind = 'used' AND at >= :start)`;
      const params = { minShown: p.minShown, floor: p.floor, start: p.start, end: p.end };
      if (dryRun) return Promise.resolve(db.query<{ n: number }, typeof params>(`SELECT count(*) AS n FROM memories WHERE ${where}`).get(params)!.n);
      return h.write(
        () =>
          db
            .query<{ id: string }, typeof params & { factor: number }>(
              `UPDATE memories SET strength = max(:floor, strength * :factor) WHERE ${where} RETURNING id`,
            )
            .all({ ...params, factor: p.factor }).length,
      );
    },

    async pruneCandidates(p) {
      return db
        .query<{ id: string; seq: number }, { now: number; before: number; floor: number; limit: number; exclude: string }>(
          `SELECT id, seq FROM memories WHERE memory_type != 'learnings' AND used_count = 0 AND created_at < :before
             AND ${effectiveStrengthSql()} < :floor AND id NOT IN (SELECT value FROM json_each(:exclude)) ORDER BY ${effectiveStrengthSql()} LIMIT :limit`,
        )
        .all({ now: p.now, before: p.before, floor: p.floor, limit: p.limit, exclude: JSON.stringify(p.exclude) });
    },

    async droppedFragments() {
      return db.query<{ id: number; reason: string; content: string }, []>("SELECT id, reason, content FROM distill_dropped ORDER BY id").all();
    },

    forgetDroppedFragments(lastId) {
      return h.write(() => {
        db.run("DELETE FROM distill_dropped WHERE id <= ?", [lastId]);
      });
    },

    async recentLearnings(p) {
      return db
        .query<Record<string, any>, { now: number; since: number; project: string | null; limit: number }>(
          `SELECT * FROM memories
            WHERE memory_type = 'learnings' AND (created_at >= :since OR updated_at >= :since)
              AND (:project IS NULL OR project = :project OR project IS NULL)
            ORDER BY ${effectiveStrengthSql()} DESC, created_at DESC LIMIT :limit`,
        )
        .all(p)
        .map(fromSql);
    },

    async derivedFrom(ids) {
      if (ids.length === 0) return [];
      return db
        .query<{ fromId: string; toId: string }, [string]>(
          "SELECT from_id AS fromId, to_id AS toId FROM links WHERE relationship = 'derived_from' AND from_id IN (SELECT value FROM json_each(?)) ORDER BY to_id",
        )
        .all(JSON.stringify(ids));
    },

    async indexCounts(top) {
      return {
        byType: db.query<{ memoryType: string; n: number }, []>("SELECT memory_type AS memoryType, count(*) AS n FROM memories GROUP BY memory_type").all(),
        projects: db
          .query<{ project: string | null; memories: number; learnings: number }, [number]>(
            `SELECT project, count(*) AS memories, sum(memory_type = 'learnings') AS learnings
               FROM memories GROUP BY project ORDER BY memories DESC LIMIT ?`,
          )
          .all(top),
        domains: db
          .query<{ domain: string; memories: number }, [number]>(
            "SELECT tag AS domain, count(*) AS memories FROM memory_tags GROUP BY tag ORDER BY memories DESC, tag LIMIT ?",
          )
          .all(top),
      };
    },
  };
}
