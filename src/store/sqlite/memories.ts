import { eq, sql } from "drizzle-orm";
import type { AnchorRow, MemoriesStore, MemoryRow, VersionRow } from "../../core/memories";
import type { NewMemoryRow } from "../../core/memories/store";
import { memories, memoryEvents } from "./schema";
import type { MemoriesBulkStore } from "../../core/memories/store-bulk";
import type { SqliteHandle } from "./storage";
import { fromSql } from "../../core/search/recent";
import { BULK_MEMORY_TRIGGERS, withTriggersSuspended } from "./bulk-load";
import { BULK_LOAD_CACHE_KIB, BULK_LOAD_FROM } from "./tuning";

interface RawAnchor {
  memory_id: string;
  repo: string;
  branch: string | null;
  commit_id: string;
  paths: string;
  anchored_at: number;
  stale: string | null;
  confirmed_at: number | null;
}

const anchorOf = (r: RawAnchor): AnchorRow => ({
  memoryId: r.memory_id,
  repo: r.repo,
  branch: r.branch,
  commit: r.commit_id,
  paths: JSON.parse(r.paths),
  anchoredAt: r.anchored_at,
  stale: r.stale === null ? null : JSON.parse(r.stale),
  confirmedAt: r.confirmed_at ?? null,
});

type RawVersion = {
  version: number;
  content: string;
  memory_type: string;
  project: string | null;
  reason: string;
  source_id: string | null;
  replaced_at: number;
};
const versionOf = (r: RawVersion): VersionRow => ({
  version: r.version,
  content: r.content,
  memoryType: r.memory_type,
  project: r.project,
  reason: r.reason,
  sourceId: r.source_id,
  replacedAt: r.replaced_at,
});

// Id lists travel as one JSON parameter (json_each): one statement whatever the list's length.
const json = (list: readonly unknown[]) => JSON.stringify(list);

/** memories/ on SQLite. `db.query` caches each statement on the connection. */
export function sqliteMemories(h: SqliteHandle): Omit<MemoriesStore, keyof MemoriesBulkStore> {
  const db = h.sqlite;
  const orm = h.orm;
  /** Whether this connection's page cache was raised for bulk loads (BULK_LOAD_CACHE_KIB). */
  let bulkCache = false;

  /** `fresh`: a memory inserted just now, which has no tags to replace (the delete cost ~0.07 ms an ingest at 100k, profiled). */
  const putTags = (memoryId: string, tags: readonly { tag: string; weight: number }[], fresh = false) => {
    if (!fresh) db.query("DELETE FROM memory_tags WHERE memory_id = ?").run(memoryId);
    const insert = db.query("INSERT INTO memory_tags(memory_id, tag, weight) VALUES (?, ?, ?)");
    for (const t of tags) insert.run(memoryId, t.tag, t.weight);
  };

  /** A new memory's columns in the order both insert statements of insertMemories name them. */
  type Columns = [
    string,
    string,
    string,
    string | null,
    string,
    string | null,
    string | null,
    string | null,
    string,
    number,
    number,
    number,
    number,
    string | null,
  ];
  const columnsOf = (m: NewMemoryRow): Columns => [
    m.id,
    m.content,
    m.memoryType,
    m.project,
    m.sourceAgent,
    m.sourceAgentId,
    m.sourceDomain,
    m.sourceSession,
    m.privacy,
    m.createdAt,
    m.updatedAt,
    m.refreshedAt,
    m.strength,
    m.createdBy ?? null,
  ];

  return {
    async insertMemories(rows) {
      return h.write(() =>
        db.transaction(() => {
          const insertVec = db.query("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)");
          // A statement cached on the connection, not drizzle's insert builder: that
          // prepared a new statement on every ingest (~0.35 ms of a 100k-store ingest's CPU, profiled).
          const insert = db.query<{ seq: number }, Columns>(
            `INSERT INTO memories(id, content, memory_type, project, source_agent, source_agent_id, source_domain, source_session, privacy, created_at, updated_at, refreshed_at, strength, created_by)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
          );
          const write = () =>
            rows.map((m) => {
              const { seq } = insert.get(...columnsOf(m))!;
              insertVec.run(BigInt(seq), m.vector);
              putTags(m.id, m.tags, true);
              return seq;
            });
          /**
           * The batch table by table (its memories in one statement, then the vectors, then the tags
           * in one statement): 0.43 -> 0.29 ms CPU a memory against row by row, interleaved
           * (bench/import-sql.ts: fewer calls, and each b-tree's pages touched once in a run).
           * JSON carries the rows; a lone surrogate would not come through it as a bound string
           * does, so such a batch goes row by row.
           */
          const writeBulk = () => {
            const seqOf = new Map(
              db
                .query<{ id: string; seq: number }, [string]>(
                  `INSERT INTO memories(id, content, memory_type, project, source_agent, source_agent_id, source_domain, source_session, privacy, created_at, updated_at, refreshed_at, strength, created_by)
                   SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, value->>7, value->>8, value->>9, value->>10, value->>11, value->>12, value->>13
                     FROM json_each(?) ORDER BY key RETURNING id, seq`,
                )
                .all(JSON.stringify(rows.map(columnsOf)))
                .map((r) => [r.id, r.seq]),
            );
            const seqs = rows.map((m) => seqOf.get(m.id)!);
            rows.forEach((m, i) => {
              insertVec.run(BigInt(seqs[i]), m.vector);
            });
            const tags = rows.flatMap((m) => m.tags.map((t) => [m.id, t.tag, t.weight]));
            if (tags.length)
              db.query<unknown, [string]>(
                "INSERT INTO memory_tags(memory_id, tag, weight) SELECT value->>0, value->>1, value->>2 FROM json_each(?) ORDER BY key",
              ).run(JSON.stringify(tags));
            return seqs;
          };
          if (rows.length < BULK_LOAD_FROM) return write();
          if (!bulkCache) db.run(`PRAGMA cache_size = -${BULK_LOAD_CACHE_KIB}`), (bulkCache = true);
          // An import's batch: the full text, primary domains and the memory count once for the batch.
          return withTriggersSuspended(db, BULK_MEMORY_TRIGGERS, () => {
            const seqs = rows.every((m) => m.content.isWellFormed()) ? writeBulk() : write();
            // AUTOINCREMENT under the write lock: every seq from the first to the last is this call's.
            const first = seqs[0];
            const last = seqs[seqs.length - 1];
            db.query("INSERT INTO memories_fts(rowid, content) SELECT seq, content FROM memories WHERE seq BETWEEN ? AND ?").run(first, last);
            // memory_tags_primary_insert's choice (highest weight, ties by name), for every new memory at once.
            db.query(
              `INSERT OR REPLACE INTO memory_primary_domain(memory_id, domain)
                 SELECT memory_id, tag FROM (
                   SELECT t.memory_id, t.tag, row_number() OVER (PARTITION BY t.memory_id ORDER BY t.weight DESC, t.tag) AS r
                     FROM memories m JOIN memory_tags t ON t.memory_id = m.id WHERE m.seq BETWEEN ? AND ?
                 ) WHERE r = 1`,
            ).run(first, last);
            db.query("UPDATE row_counts SET n = n + ? WHERE name = 'memories'").run(seqs.length);
            return seqs;
          });
        })(),
      );
    },

    async countSession(session) {
      return db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM memories WHERE source_session = ?").get(session)!.n;
    },

    async claimSession(session) {
      // Called inside Storage.transaction, which holds the write lock (BEGIN IMMEDIATE): no other writer can interleave.
      return db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM memories WHERE source_session = ?").get(session)!.n;
    },

    async memoryById(id) {
      return orm.select().from(memories).where(eq(memories.id, id)).get() ?? null;
    },

    async memoriesByIdPrefix(prefix, limit) {
      return orm
        .select()
        .from(memories)
        .where(sql`${memories.id} >= ${prefix} AND ${memories.id} < ${`${prefix}~`}`)
        .limit(limit)
        .all();
    },

    async memoriesBySeq(seqs) {
      if (seqs.length === 0) return [];
      // A cached statement, not drizzle's select builder: that prepared a new statement on every
      // search (~0.25 ms of a /search's CPU for its 10 rows; 0.04 ms this way, same rows).
      return db.query<Record<string, any>, [string]>("SELECT * FROM memories WHERE seq IN (SELECT value FROM json_each(?))").all(json(seqs)).map(fromSql);
    },

    async markUsed(id, at, strength) {
      return h.write(() =>
        db.transaction((): MemoryRow | null => {
          const r = orm
            .update(memories)
            .set({ usedCount: sql`${memories.usedCount} + 1`, lastUsedAt: at, refreshedAt: at, strength })
            .where(eq(memories.id, id))
            .returning()
            .get();
          if (!r) return null;
          orm.insert(memoryEvents).values({ memoryId: id, kind: "used", at }).run();
          return r;
        })(),
      );
    },

    async updateMemory(id, change) {
      return h.write(() => orm.update(memories).set(change).where(eq(memories.id, id)).returning().get() ?? null);
    },

    async setVector(seq, vector) {
      await h.write(() => db.query("UPDATE memory_vec SET embedding = ? WHERE rowid = ?").run(vector, BigInt(seq)));
    },

    async deleteMemories(ids) {
      if (ids.length === 0) return 0;
      const list = json(ids);
      // Links, tags, anchors, versions, the FTS row and the vector go with each memory (foreign keys and triggers).
      return h.write(() =>
        db.transaction(() => {
          const n = db
            .query<{ n: number }, [string, string]>(
              "SELECT count(*) AS n FROM links WHERE from_id IN (SELECT value FROM json_each(?)) OR to_id IN (SELECT value FROM json_each(?))",
            )
            .get(list, list)!.n;
          db.query("DELETE FROM memories WHERE id IN (SELECT value FROM json_each(?))").run(list);
          return n;
        })(),
      );
    },

    async writeTags(memoryId, tags) {
      await h.write(() => db.transaction(() => putTags(memoryId, tags))());
    },

    async tagsOf(memoryIds) {
      if (memoryIds.length === 0) return [];
      return db
        .query<{ memoryId: string; tag: string; weight: number }, [string]>(
          "SELECT memory_id AS memoryId, tag, weight FROM memory_tags WHERE memory_id IN (SELECT value FROM json_each(?)) ORDER BY memory_id, weight DESC, tag",
        )
        .all(json(memoryIds));
    },

    async linksOf(memoryId, previewChars, limit, scope = null) {
      // Within a scope the other end must be in it (?4: its projects as JSON); unscoped, today's query.
      const within = scope === null ? "" : " AND m.project IN (SELECT value FROM json_each(?4))";
      const params: [string, number, number, ...string[]] = [memoryId, previewChars, limit];
      if (scope !== null) params.push(JSON.stringify(scope));
      return db
        .query<{ id: string; head: string; length: number; memoryType: string; relationship: string; weight: number; direction: "out" | "in" }, typeof params>(
          `SELECT * FROM (
             SELECT m.id AS id, substr(m.content, 1, ?2) AS head, length(m.content) AS length, m.memory_type AS memoryType, l.relationship AS relationship, l.weight AS weight, 'out' AS direction
               FROM links l JOIN memories m ON m.id = l.to_id WHERE l.from_id = ?1${within}
             UNION ALL
             SELECT m.id, substr(m.content, 1, ?2), length(m.content), m.memory_type, l.relationship, l.weight, 'in'
               FROM links l JOIN memories m ON m.id = l.from_id WHERE l.to_id = ?1${within})
           ORDER BY weight DESC, id LIMIT ?3`,
        )
        .all(...params);
    },

    async snapshot(memoryId) {
      return (
        db
          .query<{ content: string; memoryType: string; project: string | null }, [string]>(
            "SELECT content, memory_type AS memoryType, project FROM memories WHERE id = ?",
          )
          .get(memoryId) ?? null
      );
    },

    async addVersion(memoryId, v, keep) {
      return h.write(() =>
        db.transaction(() => {
          const { n } = db.query<{ n: number }, [string]>("SELECT coalesce(max(version), 0) + 1 AS n FROM memory_history WHERE memory_id = ?").get(memoryId)!;
          db.query(
            "INSERT INTO memory_history(memory_id, version, content, memory_type, project, reason, source_id, replaced_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
          ).run(memoryId, n, v.content, v.memoryType, v.project, v.reason, v.sourceId, v.replacedAt);
          db.query("DELETE FROM memory_history WHERE memory_id = ? AND version <= ?").run(memoryId, n - keep);
          return n;
        })(),
      );
    },

    async versions(memoryId) {
      return db
        .query<RawVersion, [string]>(
          "SELECT version, content, memory_type, project, reason, source_id, replaced_at FROM memory_history WHERE memory_id = ? ORDER BY version",
        )
        .all(memoryId)
        .map(versionOf);
    },

    async version(memoryId, version) {
      const r = db
        .query<RawVersion, [string, number]>(
          "SELECT version, content, memory_type, project, reason, source_id, replaced_at FROM memory_history WHERE memory_id = ? AND version = ?",
        )
        .get(memoryId, version);
      return r ? versionOf(r) : null;
    },

    async deleteVersions(memoryId) {
      await h.write(() => db.query("DELETE FROM memory_history WHERE memory_id = ?").run(memoryId));
    },

    async anchorPaths(memoryIds, repo) {
      const out = new Map<string, string[]>();
      if (memoryIds.length === 0) return out;
      const rows = db
        .query<{ memory_id: string; paths: string }, [string, string]>(
          "SELECT memory_id, paths FROM memory_anchors WHERE repo = ? AND memory_id IN (SELECT value FROM json_each(?))",
        )
        .all(repo, json(memoryIds));
      for (const r of rows) out.set(r.memory_id, JSON.parse(r.paths));
      return out;
    },

    async upsertAnchors(rows) {
      if (rows.length === 0) return;
      await h.write(() =>
        db.transaction(() => {
          const upsert = db.query(
            `INSERT INTO memory_anchors(memory_id, repo, branch, commit_id, paths, anchored_at, stale, stale_at, evidence) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?)
             ON CONFLICT(memory_id, repo) DO UPDATE SET branch = excluded.branch, commit_id = excluded.commit_id, paths = excluded.paths,
               anchored_at = excluded.anchored_at, stale = NULL, stale_at = NULL, rechecked = NULL, confirmed_at = NULL,
               evidence = coalesce(excluded.evidence, memory_anchors.evidence)`,
          );
          for (const a of rows) upsert.run(a.memoryId, a.repo, a.branch, a.commit, JSON.stringify(a.paths), a.anchoredAt, a.evidence ?? null);
        })(),
      );
    },

    async anchorsOf(memoryIds) {
      if (memoryIds.length === 0) return [];
      return db
        .query<RawAnchor, [string]>(
          "SELECT * FROM memory_anchors WHERE memory_id IN (SELECT value FROM json_each(?)) ORDER BY memory_id, anchored_at DESC, repo",
        )
        .all(json(memoryIds))
        .map(anchorOf);
    },

    async staleMarks(memoryIds) {
      if (memoryIds.length === 0) return [];
      return db
        .query<{ memory_id: string; stale: string }, [string]>(
          "SELECT memory_id, stale FROM memory_anchors WHERE stale IS NOT NULL AND memory_id IN (SELECT value FROM json_each(?)) ORDER BY stale_at DESC",
        )
        .all(json(memoryIds))
        .map((r) => ({ memoryId: r.memory_id, stale: JSON.parse(r.stale) }));
    },

    async repoAnchors(repo, scope = null) {
      if (scope !== null)
        return db
          .query<RawAnchor, [string, string]>(
            `SELECT a.* FROM memory_anchors a JOIN memories m ON m.id = a.memory_id
              WHERE a.repo = ? AND m.project IN (SELECT value FROM json_each(?)) ORDER BY a.anchored_at, a.memory_id`,
          )
          .all(repo, JSON.stringify(scope))
          .map(anchorOf);
      return db.query<RawAnchor, [string]>("SELECT * FROM memory_anchors WHERE repo = ? ORDER BY anchored_at, memory_id").all(repo).map(anchorOf);
    },

    async markStale(repo, marks, fresh, at) {
      return h.write(() =>
        db.transaction(() => {
          let marked = 0;
          let cleared = 0;
          let unknown = 0;
          const set = db.query("UPDATE memory_anchors SET stale = ?, stale_at = ? WHERE memory_id = ? AND repo = ?");
          for (const { id, mark } of marks) {
            if (set.run(JSON.stringify(mark), at, id, repo).changes > 0) marked++;
            else unknown++;
          }
          const clear = db.query("UPDATE memory_anchors SET stale = NULL, stale_at = NULL WHERE memory_id = ? AND repo = ? AND stale IS NOT NULL");
          const exists = db.query<{ n: number }, [string, string]>("SELECT count(*) AS n FROM memory_anchors WHERE memory_id = ? AND repo = ?");
          for (const id of fresh) {
            if (exists.get(id, repo)!.n === 0) unknown++;
            else if (clear.run(id, repo).changes > 0) cleared++;
          }
          return { marked, cleared, unknown };
        })(),
      );
    },

    async staleAnchors(limit) {
      return db
        .query<
          { memory_id: string; repo: string; commit_id: string; paths: string; stale: string; rechecked: string | null; evidence: string | null },
          [number]
        >(
          "SELECT memory_id, repo, commit_id, paths, stale, rechecked, evidence FROM memory_anchors WHERE stale IS NOT NULL ORDER BY stale_at, memory_id, repo LIMIT ?",
        )
        .all(limit)
        .map((r) => ({
          memoryId: r.memory_id,
          repo: r.repo,
          commit: r.commit_id,
          paths: JSON.parse(r.paths),
          staleText: r.stale,
          rechecked: r.rechecked,
          evidence: r.evidence,
        }));
    },

    async evidenceOf(memoryId) {
      return db
        .query<{ repo: string; evidence: string }, [string]>(
          "SELECT repo, evidence FROM memory_anchors WHERE memory_id = ? AND evidence IS NOT NULL ORDER BY repo",
        )
        .all(memoryId);
    },

    async settleAnchor(memoryId, repo, staleText, outcome) {
      return h.write(() => {
        if (outcome.kind === "delete")
          return db.query("DELETE FROM memory_anchors WHERE memory_id = ? AND repo = ? AND stale = ?").run(memoryId, repo, staleText).changes > 0;
        if (outcome.kind === "checked")
          return (
            db.query("UPDATE memory_anchors SET rechecked = ? WHERE memory_id = ? AND repo = ? AND stale = ?").run(outcome.rechecked, memoryId, repo, staleText)
              .changes > 0
          );
        const a = outcome.anchor;
        return (
          db
            .query(
              "UPDATE memory_anchors SET commit_id = ?, paths = ?, stale = NULL, stale_at = NULL, rechecked = NULL, confirmed_at = ? WHERE memory_id = ? AND repo = ? AND stale = ?",
            )
            .run(a.commit, JSON.stringify(a.paths), a.at, memoryId, repo, staleText).changes > 0
        );
      });
    },
  };
}
