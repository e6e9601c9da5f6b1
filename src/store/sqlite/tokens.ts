import type { AuditStore } from "../../core/audit";
import { tokenRowOf, type TokenColumns, type TokensStore } from "../../core/tokens";
import type { SqliteHandle } from "./storage";

const COLUMNS = "name, hash, role, projects, created_at, expires_at, last_used_at, revoked_at";

/** tokens/ on SQLite (migration 0016). */
export function sqliteTokens(h: SqliteHandle): TokensStore {
  const db = h.sqlite;
  return {
    async insert(r) {
      return h.write(() => {
        const live = db.query("SELECT 1 FROM tokens WHERE name = ? AND revoked_at IS NULL").get(r.name);
        if (live) return false;
        db.query(`INSERT INTO tokens(${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`).run(
          r.name,
          r.hash,
          r.role,
          r.projects ? JSON.stringify(r.projects) : null,
          r.createdAt,
          r.expiresAt,
          r.lastUsedAt,
          r.revokedAt,
        );
        return true;
      });
    },
    async list() {
      return db.query<TokenColumns, []>(`SELECT ${COLUMNS} FROM tokens ORDER BY revoked_at IS NOT NULL, name, created_at`).all().map(tokenRowOf);
    },
    async byHash(hash) {
      const r = db.query<TokenColumns, [string]>(`SELECT ${COLUMNS} FROM tokens WHERE hash = ?`).get(hash);
      return r ? tokenRowOf(r) : null;
    },
    async revoke(name, at) {
      return h.write(() => db.query("UPDATE tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL").run(at, name).changes > 0);
    },
    async touch(hash, at) {
      await h.write(() => db.query("UPDATE tokens SET last_used_at = ? WHERE hash = ?").run(at, hash));
    },
    async countAdmins() {
      return db.query<{ n: number }, []>("SELECT count(*) AS n FROM tokens WHERE role = 'admin' AND revoked_at IS NULL").get()!.n;
    },
  };
}

/** audit/ on SQLite (migration 0016). */
export function sqliteAudit(h: SqliteHandle): AuditStore {
  const db = h.sqlite;
  return {
    async append(entries) {
      await h.write(() =>
        db.transaction(() => {
          const insert = db.query("INSERT INTO audit_log(at, actor, action, target, detail, peer) VALUES (?, ?, ?, ?, ?, ?)");
          for (const e of entries) insert.run(e.at, e.actor, e.action, e.target, e.detail, e.peer);
        })(),
      );
    },
    async list(f) {
      const where: string[] = [];
      const args: (string | number)[] = [];
      if (f.actor !== undefined) where.push("actor = ?"), args.push(f.actor);
      if (f.action !== undefined)
        f.action.endsWith(".")
          ? (where.push("substr(action, 1, ?) = ?"), args.push(f.action.length, f.action))
          : (where.push("action = ?"), args.push(f.action));
      if (f.since !== undefined) where.push("at >= ?"), args.push(f.since);
      if (f.until !== undefined) where.push("at < ?"), args.push(f.until);
      if (f.before !== undefined) where.push("id < ?"), args.push(f.before);
      args.push(f.limit);
      return db
        .query<
          { id: number; at: number; actor: string; action: string; target: string | null; detail: string | null; peer: string | null },
          (string | number)[]
        >(`SELECT id, at, actor, action, target, detail, peer FROM audit_log ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ?`)
        .all(...args);
    },
    async prune(olderThan, keep) {
      return h.write(() => {
        const aged = db.query("DELETE FROM audit_log WHERE at < ?").run(olderThan).changes;
        const over = db.query("DELETE FROM audit_log WHERE id <= (SELECT max(id) FROM audit_log) - ?").run(keep).changes;
        return aged + over;
      });
    },
  };
}
