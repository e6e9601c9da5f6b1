import type { AuditStore } from "../../core/audit";
import { tokenRowOf, type TokenColumns, type TokensStore } from "../../core/tokens";
import type { PgHandle } from "./open";

const COLUMNS = "name, hash, role, projects, created_at, expires_at, last_used_at, revoked_at";

/** tokens/ on PostgreSQL (migration 0005): every server over the database reads the same rows. */
export function pgTokens(h: PgHandle): TokensStore {
  const T = `${h.schema}.tokens`;
  return {
    async insert(r) {
      // The partial unique index on live names decides a race between two servers.
      const rows = await h.sql.unsafe(
        `INSERT INTO ${T}(${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (name) WHERE revoked_at IS NULL DO NOTHING RETURNING 1 AS ok`,
        [r.name, r.hash, r.role, r.projects ? JSON.stringify(r.projects) : null, r.createdAt, r.expiresAt, r.lastUsedAt, r.revokedAt],
      );
      return rows.length > 0;
    },
    async list() {
      return (await h.sql.unsafe(`SELECT ${COLUMNS} FROM ${T} ORDER BY revoked_at IS NOT NULL, name, created_at`)).map((r: TokenColumns) => tokenRowOf(r));
    },
    async byHash(hash) {
      const [r] = await h.sql.unsafe(`SELECT ${COLUMNS} FROM ${T} WHERE hash = $1`, [hash]);
      return r ? tokenRowOf(r as TokenColumns) : null;
    },
    async revoke(name, at) {
      return (await h.sql.unsafe(`UPDATE ${T} SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL RETURNING 1 AS ok`, [at, name])).length > 0;
    },
    async touch(hash, at) {
      await h.sql.unsafe(`UPDATE ${T} SET last_used_at = $1 WHERE hash = $2`, [at, hash]);
    },
    async countAdmins() {
      const [r] = await h.sql.unsafe(`SELECT count(*)::int AS n FROM ${T} WHERE role = 'admin' AND revoked_at IS NULL`);
      return Number(r.n);
    },
  };
}

/** audit/ on PostgreSQL (migration 0005). */
export function pgAudit(h: PgHandle): AuditStore {
  const A = `${h.schema}.audit_log`;
  return {
    async append(entries) {
      const args: unknown[] = [];
      const values = entries.map((e) => {
        const n = args.push(e.at, e.actor, e.action, e.target, e.detail, e.peer);
        return `($${n - 5}, $${n - 4}, $${n - 3}, $${n - 2}, $${n - 1}, $${n})`;
      });
      // Batches are small (a flush every 200 ms); 10k parameters keeps far below the protocol's 65k.
      for (let i = 0; i < values.length; i += 1000) {
        const part = values.slice(i, i + 1000);
        const offset = i * 6;
        await h.sql.unsafe(
          `INSERT INTO ${A}(at, actor, action, target, detail, peer) VALUES ${part.map((v) => v.replace(/\$(\d+)/g, (_, d) => `$${Number(d) - offset}`)).join(", ")}`,
          args.slice(offset, offset + part.length * 6),
        );
      }
    },
    async list(f) {
      const where: string[] = [];
      const args: unknown[] = [];
      const p = (v: unknown) => `$${args.push(v)}`;
      if (f.actor !== undefined) where.push(`actor = ${p(f.actor)}`);
      if (f.action !== undefined) where.push(f.action.endsWith(".") ? `starts_with(action, ${p(f.action)})` : `action = ${p(f.action)}`);
      if (f.since !== undefined) where.push(`at >= ${p(f.since)}`);
      if (f.until !== undefined) where.push(`at < ${p(f.until)}`);
      if (f.before !== undefined) where.push(`id < ${p(f.before)}`);
      const rows = await h.sql.unsafe(
        `SELECT id, at, actor, action, target, detail, peer FROM ${A} ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ${p(f.limit)}`,
        args,
      );
      return rows.map((r: Record<string, unknown>) => ({ ...r, id: Number(r.id), at: Number(r.at) })) as never;
    },
    async prune(olderThan, keep) {
      const [aged] = await h.sql.unsafe(`WITH d AS (DELETE FROM ${A} WHERE at < $1 RETURNING 1) SELECT count(*)::int AS n FROM d`, [olderThan]);
      const [over] = await h.sql.unsafe(
        `WITH d AS (DELETE FROM ${A} WHERE id <= (SELECT max(id) FROM ${A}) - $1 RETURNING 1) SELECT count(*)::int AS n FROM d`,
        [keep],
      );
      return Number(aged.n) + Number(over.n);
    },
  };
}
