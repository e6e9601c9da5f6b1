import type { Statement } from "bun:sqlite";
import type {
  ExportRow,
  FullMemory,
  ListFilterSpec,
  ListPageRequest,
  ListRow,
  MemoriesBulkStore,
  MigrateChunk,
  MigrateTable,
} from "../../core/memories/store-bulk";
import { eventRecord, rowsOf } from "../../core/memories/store-bulk";
import { effectiveStrengthSql } from "./strength";
import { DEFAULT_DOMAIN } from "../../core/memories/tags";
import { invalid } from "../../errors";
import { deleteMeta, getMeta, setMeta } from "./open";
import {
  BULK_LINK_TRIGGERS,
  BULK_MEMORY_TRIGGERS,
  buildDeferredIndexes,
  deferIndexes,
  fillAfterRestore,
  withIndexesSuspended,
  withTriggersSuspended,
} from "./bulk-load";

/**
 * Tables whose secondary indexes a restore builds once at the end (bulk-load.ts). Not links:
 * the link counts are computed from its to_id index.
 */
const RESTORE_INDEXED = ["memories", "memory_tags", "memory_events"];
import type { SqliteHandle } from "./storage";

type Params = Record<string, string | number>;

const DOMAIN_SQL = `coalesce((SELECT d.domain FROM memory_primary_domain d WHERE d.memory_id = m.id), '${DEFAULT_DOMAIN}')`;
const EFF_SQL = effectiveStrengthSql("m.strength", "m.refreshed_at");

/** WHERE clause and bindings for the list filters, on `memories m`. */
function whereOf(f: ListFilterSpec, now: number): { sql: string; params: Params } {
  const parts: string[] = [];
  const params: Params = {};
  if (f.project !== null) {
    parts.push("m.project = :project");
    params.project = f.project;
  }
  if (f.type !== null) {
    parts.push("m.memory_type = :type");
    params.type = f.type;
  }
  if (f.domain !== null) {
    // "general" is also every memory without a tag; other domains come straight from their index.
    parts.push(f.domain === DEFAULT_DOMAIN ? `${DOMAIN_SQL} = :domain` : "m.id IN (SELECT memory_id FROM memory_primary_domain WHERE domain = :domain)");
    params.domain = f.domain;
  }
  if (f.from !== null) {
    parts.push("m.created_at >= :from");
    params.from = f.from;
  }
  if (f.to !== null) {
    parts.push("m.created_at <= :to");
    params.to = f.to;
  }
  if (f.minStrength !== null) {
    parts.push(`${EFF_SQL} >= :min`);
    params.min = f.minStrength;
    params.now = now;
  }
  if (f.usage === "never") parts.push("m.shown_count = 0 AND m.used_count = 0");
  else if (f.usage === "shown") parts.push("m.shown_count > 0");
  else if (f.usage === "used") parts.push("m.used_count > 0");
  if (f.ids !== null) {
    parts.push("m.id IN (SELECT value FROM json_each(:marked))");
    params.marked = JSON.stringify(f.ids);
  }
  return { sql: parts.length ? parts.join(" AND ") : "1", params };
}

const columns = (previewChars: number) => `m.seq AS seq, m.id AS id, substr(m.content, 1, ${Math.trunc(previewChars)}) AS head, length(m.content) AS length,
  m.memory_type AS memoryType, m.project AS project, ${DOMAIN_SQL} AS domain, m.source_agent AS sourceAgent, m.created_at AS createdAt,
  m.strength AS strength, ${EFF_SQL} AS effectiveStrength, m.shown_count AS shownCount, m.used_count AS usedCount, m.link_count AS linkCount`;

/** Sort key column for the keyset walks; both have an index ending in the rowid (memories_created, memories_strength). */
const KEY_SQL = { newest: "m.created_at", importance: "m.strength" } as const;

const MEMORY_COLUMNS = `id, content, memory_type, project, source_agent, source_agent_id, source_domain, source_session, privacy,
  created_at, updated_at, refreshed_at, strength, shown_count, used_count, last_shown_at, last_used_at, created_by`;

const vectorOf = (bytes: Uint8Array | undefined): Float32Array | null =>
  bytes ? new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)) : null;

/** The bulk side of memories/ on SQLite. */
export function sqliteMemoriesBulk(h: SqliteHandle): MemoriesBulkStore {
  const db = h.sqlite;
  const cache = new Map<string, Statement<any, any>>();
  const q = <R>(sql: string) => {
    let st = cache.get(sql);
    if (!st) cache.set(sql, (st = db.query(sql)));
    return st as Statement<R, any>;
  };
  const tagsOf = (id: string) =>
    q<{ tag: string; weight: number }>("SELECT tag, weight FROM memory_tags WHERE memory_id = ? ORDER BY weight DESC, tag").all(id);
  const vecOf = (seq: number) => vectorOf(q<{ e: Uint8Array }>("SELECT embedding e FROM memory_vec WHERE rowid = ?").get(seq)?.e);
  const fullMemory = (m: Record<string, any>, vectors: boolean): FullMemory => {
    const { link_count: _derived, ...cols } = m;
    return { ...(cols as FullMemory), tags: tagsOf(m.id), vector: vectors ? vecOf(m.seq) : null };
  };

  const selection = (f: ListFilterSpec, now: number, onlySeqs: number[] | null) => {
    const where = whereOf(f, now);
    const bySeq = onlySeqs ? " AND m.seq IN (SELECT value FROM json_each(:seqs))" : "";
    const params = onlySeqs ? { ...where.params, seqs: JSON.stringify(onlySeqs) } : where.params;
    return q<{ seq: number; id: string }>(`SELECT m.seq AS seq, m.id AS id FROM memories m WHERE ${where.sql}${bySeq}`).all(params);
  };

  /** Inserts memories (with tags and vectors) and the records that hang off them; call inside a transaction. */
  const insertAll = (rows: ExportRow[], keepSeq: boolean): { seqs: number[]; links: number } => {
    const seqs: number[] = [];
    let links = 0;
    const insert = q<{ seq: number }>(
      keepSeq
        ? `INSERT INTO memories(seq, ${MEMORY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`
        : `INSERT INTO memories(${MEMORY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
    );
    for (const r of rows) {
      if (r.kind === "memory") {
        const m = r.memory;
        const values = [
          m.id,
          m.content,
          m.memory_type,
          m.project,
          m.source_agent,
          m.source_agent_id,
          m.source_domain,
          m.source_session,
          m.privacy,
          m.created_at,
          m.updated_at,
          m.refreshed_at,
          m.strength,
          m.shown_count,
          m.used_count,
          m.last_shown_at,
          m.last_used_at,
          m.created_by ?? null,
        ];
        const { seq } = insert.get(...(keepSeq ? [m.seq!, ...values] : values))!;
        seqs.push(seq);
        if (m.vector) q("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)").run(BigInt(seq), m.vector);
        for (const t of m.tags) q("INSERT INTO memory_tags(memory_id, tag, weight) VALUES (?, ?, ?)").run(m.id, t.tag, t.weight);
      } else if (r.kind === "link") {
        const l = r.link;
        links += q("INSERT OR IGNORE INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, ?, ?, ?)").run(
          l.from_id,
          l.to_id,
          l.relationship,
          l.weight,
          l.created_at,
        ).changes;
      } else if (r.kind === "segment") {
        const g = r.segment;
        q("INSERT OR IGNORE INTO segments(key, session_id, memory_count, created_at) VALUES (?, ?, ?, ?)").run(
          g.key,
          g.session_id,
          g.memory_count,
          g.created_at,
        );
      } else if (r.kind === "event") {
        q("INSERT INTO memory_events(memory_id, kind, at, detail) VALUES (?, ?, ?, ?)").run(
          r.event.memory_id,
          r.event.event,
          r.event.at,
          r.event.detail ?? null,
        );
      } else if (r.kind === "history") {
        const v = r.history;
        q(
          "INSERT OR REPLACE INTO memory_history(memory_id, version, content, memory_type, project, reason, source_id, replaced_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ).run(v.memory_id, v.version, v.content, v.memory_type, v.project ?? null, v.reason, v.source_id ?? null, v.replaced_at);
      } else if (r.kind === "anchor") {
        const a = r.anchor;
        q(
          "INSERT OR REPLACE INTO memory_anchors(memory_id, repo, branch, commit_id, paths, anchored_at, stale, stale_at, evidence, rechecked, confirmed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ).run(
          a.memory_id,
          a.repo,
          a.branch ?? null,
          a.commit_id,
          a.paths,
          a.anchored_at,
          a.stale ?? null,
          a.stale_at ?? null,
          a.evidence ?? null,
          a.rechecked ?? null,
          a.confirmed_at ?? null,
        );
      }
    }
    return { seqs, links };
  };

  /** Each table's stable walk order for migrate: a rowid-like key and the record it becomes. */
  const MIGRATE_SQL: Record<MigrateTable, { sql: string; row: (r: Record<string, any>) => ExportRow }> = {
    memories: {
      sql: "SELECT seq AS k, * FROM memories WHERE seq > ? ORDER BY seq LIMIT ?",
      row: ({ k: _k, ...m }) => ({ kind: "memory", memory: fullMemory(m, true) }),
    },
    links: {
      sql: "SELECT rowid AS k, from_id, to_id, relationship, weight, created_at FROM links WHERE rowid > ? ORDER BY rowid LIMIT ?",
      row: ({ k: _k, ...l }) => ({ kind: "link", link: l as any }),
    },
    segments: {
      sql: "SELECT rowid AS k, key, session_id, memory_count, created_at FROM segments WHERE rowid > ? ORDER BY rowid LIMIT ?",
      row: ({ k: _k, ...g }) => ({ kind: "segment", segment: g as any }),
    },
    events: {
      sql: "SELECT id AS k, memory_id, kind AS event, at, detail FROM memory_events WHERE id > ? ORDER BY id LIMIT ?",
      row: ({ k: _k, ...e }) => ({ kind: "event", event: eventRecord(e as any) }),
    },
    history: {
      sql: "SELECT rowid AS k, memory_id, version, content, memory_type, project, reason, source_id, replaced_at FROM memory_history WHERE rowid > ? ORDER BY rowid LIMIT ?",
      row: ({ k: _k, ...v }) => ({ kind: "history", history: v as any }),
    },
    anchors: {
      sql: "SELECT rowid AS k, memory_id, repo, branch, commit_id, paths, anchored_at, stale, stale_at, evidence, rechecked, confirmed_at FROM memory_anchors WHERE rowid > ? ORDER BY rowid LIMIT ?",
      row: ({ k: _k, ...a }) => ({ kind: "anchor", anchor: a as any }),
    },
  };

  return {
    async listPage(f: ListFilterSpec, req: ListPageRequest): Promise<ListRow[]> {
      const where = whereOf(f, req.now);
      const params: Params = { ...where.params, now: req.now, limit: req.limit };
      const key = KEY_SQL[req.sort];
      let keyset = "";
      if (req.after) {
        // A row-value comparison: SQLite turns it into a range on the sort index, so page N costs what page 1 does.
        keyset = ` AND (${key}, m.seq) < (:ck, :cseq)`;
        params.ck = req.after.key;
        params.cseq = req.after.seq;
      }
      return q<ListRow>(`SELECT ${columns(req.previewChars)} FROM memories m WHERE ${where.sql}${keyset} ORDER BY ${key} DESC, m.seq DESC LIMIT :limit`).all(
        params,
      );
    },

    async listRows(seqs, now, previewChars) {
      if (seqs.length === 0) return [];
      return q<ListRow>(`SELECT ${columns(previewChars)} FROM memories m WHERE m.seq IN (SELECT value FROM json_each(:seqs))`).all({
        seqs: JSON.stringify(seqs),
        now,
      });
    },

    async countSelected(f, now) {
      const where = whereOf(f, now);
      return q<{ n: number }>(`SELECT count(*) AS n FROM memories m WHERE ${where.sql}`).get(where.params)!.n;
    },

    async filterIds(ids, f, now) {
      if (ids.length === 0) return [];
      const where = whereOf(f, now);
      return q<{ seq: number; id: string }>(
        `SELECT m.seq AS seq, m.id AS id FROM memories m WHERE m.id IN (SELECT value FROM json_each(:ids)) AND ${where.sql}`,
      ).all({
        ...where.params,
        ids: JSON.stringify(ids),
      });
    },

    async deleteSelected(f, now, onlySeqs, confirm) {
      return h.write(() =>
        db.transaction(() => {
          const rows = selection(f, now, onlySeqs);
          if (rows.length !== confirm) return { count: rows.length };
          if (rows.length === 0) return { deleted: rows, linksRemoved: 0 };
          const ids = JSON.stringify(rows.map((r) => r.id));
          const links = q<{ n: number }>(
            "SELECT count(*) AS n FROM links WHERE from_id IN (SELECT value FROM json_each(?)) OR to_id IN (SELECT value FROM json_each(?))",
          ).get(ids, ids)!.n;
          // Links, tags, anchors and versions cascade; FTS and vectors go by trigger.
          q("DELETE FROM memories WHERE id IN (SELECT value FROM json_each(?))").run(ids);
          return { deleted: rows, linksRemoved: links };
        })(),
      );
    },

    async facets(scope = null) {
      if (scope !== null) {
        // Within a scope: its projects, and primary domains of its memories only (memories_project, then each row's domain).
        const p = JSON.stringify(scope);
        return {
          projects: q<{ name: string; count: number }>(
            "SELECT project AS name, count(*) AS count FROM memories WHERE project IN (SELECT value FROM json_each(?)) GROUP BY project ORDER BY count DESC, name LIMIT 500",
          ).all(p),
          domains: q<{ name: string; count: number }>(
            `SELECT d.domain AS name, count(*) AS count FROM memories m JOIN memory_primary_domain d ON d.memory_id = m.id
              WHERE m.project IN (SELECT value FROM json_each(?)) GROUP BY d.domain ORDER BY count DESC, name LIMIT 500`,
          ).all(p),
        };
      }
      const projects = q<{ name: string; count: number }>(
        "SELECT project AS name, count(*) AS count FROM memories WHERE project IS NOT NULL GROUP BY project ORDER BY count DESC, name LIMIT 500",
      ).all();
      const domains = q<{ name: string; count: number }>(
        "SELECT domain AS name, count(*) AS count FROM memory_primary_domain GROUP BY domain ORDER BY count DESC, name LIMIT 500",
      ).all();
      return { projects, domains };
    },

    async countMemories(afterSeq) {
      if (afterSeq === undefined) return q<{ n: number }>("SELECT count(*) AS n FROM memories").get()!.n;
      return q<{ n: number }>("SELECT count(*) AS n FROM memories WHERE seq > ?").get(afterSeq)!.n;
    },

    async embedderState() {
      return { embedderId: getMeta(h, "embedder_id"), reembedCursor: getMeta(h, "reembed_cursor") };
    },

    async exportRows(opts, emit) {
      // One read transaction is the snapshot. It holds the write lock: on a
      // shared connection another request's write would otherwise land inside it.
      await h.write(async () => {
        db.run("BEGIN");
        try {
          for (const m of db.query<Record<string, any>, []>("SELECT * FROM memories ORDER BY seq").iterate()) {
            const { seq: _seq, ...memory } = fullMemory(m, opts.vectors);
            await emit({ kind: "memory", memory });
          }
          for (const l of db.query<any, []>("SELECT from_id, to_id, relationship, weight, created_at FROM links ORDER BY rowid").iterate())
            await emit({ kind: "link", link: l });
          for (const g of db.query<any, []>("SELECT key, session_id, memory_count, created_at FROM segments").iterate())
            await emit({ kind: "segment", segment: g });
          for (const e of db.query<any, []>("SELECT memory_id, kind AS event, at, detail FROM memory_events ORDER BY id").iterate())
            await emit({ kind: "event", event: eventRecord(e) });
          for (const v of db
            .query<any, []>(
              "SELECT memory_id, version, content, memory_type, project, reason, source_id, replaced_at FROM memory_history ORDER BY memory_id, version",
            )
            .iterate()) {
            await emit({ kind: "history", history: v });
          }
          for (const a of db
            .query<any, []>(
              "SELECT memory_id, repo, branch, commit_id, paths, anchored_at, stale, stale_at, evidence, rechecked, confirmed_at FROM memory_anchors ORDER BY memory_id, repo",
            )
            .iterate()) {
            await emit({ kind: "anchor", anchor: a });
          }
        } finally {
          db.run("COMMIT");
        }
      });
    },

    async importRows(data, embedderId) {
      return h.write(() =>
        db.transaction(() => {
          if (q<{ n: number }>("SELECT count(*) AS n FROM memories").get()!.n > 0)
            throw invalid(`the database at ${h.file} already holds memories; import into an empty store`);
          const rows = rowsOf(data);
          if (getMeta(h, "embedder_id") === null) setMeta(h, "embedder_id", embedderId);
          // The import's bulk path (bulk-load.ts): the per-row triggers' work once, over the whole store.
          return withTriggersSuspended(db, [...BULK_MEMORY_TRIGGERS, ...BULK_LINK_TRIGGERS], () => {
            return withIndexesSuspended(db, RESTORE_INDEXED, () => {
              const out = insertAll(rows, false);
              fillAfterRestore(db, { memories: out.seqs.length, links: out.links });
              return out;
            });
          });
        })(),
      );
    },

    async deferIndexes() {
      return h.write(() => deferIndexes(db));
    },

    async buildDeferredIndexes() {
      await h.write(() => buildDeferredIndexes(db));
    },

    async copyTo(file) {
      // VACUUM INTO is a consistent online copy; it reads, so it needs no write lock.
      db.run("VACUUM INTO ?", [file]);
      return true;
    },

    async reembedRows(afterSeq, limit) {
      return q<{ seq: number; content: string; project: string | null }>("SELECT seq, content, project FROM memories WHERE seq > ? ORDER BY seq LIMIT ?").all(
        afterSeq,
        limit,
      );
    },

    async applyReembed(expect, vectors, cursor) {
      return h.write(() =>
        db.transaction(() => {
          if (getMeta(h, "reembed_cursor") !== expect.cursor || getMeta(h, "embedder_id") !== expect.embedderId) return false;
          // vec0 has no upsert: delete then insert.
          for (const v of vectors) {
            q("DELETE FROM memory_vec WHERE rowid = ?").run(BigInt(v.seq));
            q("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)").run(BigInt(v.seq), v.vector);
          }
          setMeta(h, "reembed_cursor", cursor);
          return true;
        })(),
      );
    },

    async finishReembed(expect) {
      return h.write(() =>
        db.transaction(() => {
          if (getMeta(h, "reembed_cursor") !== expect.cursor || getMeta(h, "embedder_id") !== expect.embedderId) return false;
          deleteMeta(h, "reembed_cursor");
          return true;
        })(),
      );
    },

    async seqsBetween(from, to) {
      return q<{ seq: number }>("SELECT seq FROM memories WHERE seq BETWEEN ? AND ?")
        .all(from, to)
        .map((r) => r.seq);
    },

    async migrateRead(table, after, limit): Promise<MigrateChunk> {
      const t = MIGRATE_SQL[table];
      const rows = q<Record<string, any>>(t.sql).all(after, limit);
      return { table, last: rows.length ? rows[rows.length - 1].k : null, rows: rows.map(t.row) };
    },

    async migrateCursor() {
      return getMeta(h, "migrate_cursor");
    },

    async migrateWrite(rows, cursor, opts) {
      await h.write(() =>
        db.transaction(() => {
          insertAll(rows, true);
          setMeta(h, "migrate_cursor", cursor);
          // AUTOINCREMENT continues past the largest seq inserted: `finish` has nothing to move.
          if (opts.embedderId) setMeta(h, "embedder_id", opts.embedderId);
        })(),
      );
    },
  };
}
