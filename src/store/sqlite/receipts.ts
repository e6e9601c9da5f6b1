import type { SQLQueryBindings, Statement } from "bun:sqlite";
import type { NewReceipt, ReceiptRow, ReceiptStore, SessionSummary } from "../../core/receipts";
import type { ProjectScope } from "../../core/scope";
import { transact } from "./open";
import type { SqliteHandle } from "./storage";

const DAY_MS = 86_400_000;

type DayTokens = { i: number; tokens: number; injected: number; used: number };

/** Tokens per day of the window; `also` narrows the receipts joined (a scope: receipts of its projects). */
const dailyTokensSql = (also: string) =>
  `WITH RECURSIVE d(i, s) AS (SELECT 0, :start UNION ALL SELECT i + 1, s + ${DAY_MS} FROM d WHERE i + 1 < :days)
   SELECT d.i AS i, coalesce(sum(r.tokens), 0) AS tokens, coalesce(sum(json_array_length(r.injected)), 0) AS injected, coalesce(sum(json_array_length(r.used)), 0) AS used
     FROM d LEFT JOIN recall_receipts r ON r.kind = 'recall' AND r.at >= d.s AND r.at < d.s + ${DAY_MS}${also}
    GROUP BY d.i ORDER BY d.i`;

interface Row {
  id: string;
  at: number;
  kind: string;
  via: string;
  session_id: string | null;
  turn: number | null;
  agent: string | null;
  project: string | null;
  prompt: string | null;
  prompt_hash: string;
  tokens: number;
  budget: number | null;
  injected: string;
  dropped: string;
  used: string;
}

export const receiptFromRow = (r: Row): ReceiptRow => ({
  id: r.id,
  at: Number(r.at),
  kind: r.kind as ReceiptRow["kind"],
  via: r.via as ReceiptRow["via"],
  sessionId: r.session_id,
  turn: r.turn === null ? null : Number(r.turn),
  agent: r.agent,
  project: r.project,
  prompt: r.prompt,
  promptHash: r.prompt_hash,
  tokens: Number(r.tokens),
  budget: r.budget === null ? null : Number(r.budget),
  injected: JSON.parse(r.injected),
  dropped: JSON.parse(r.dropped),
  used: JSON.parse(r.used),
});

/** receipts/ on SQLite: a bounded table written in batches (core/receipts/writer.ts), read by pages and `memsvc why`. */
export function sqliteReceipts(h: SqliteHandle): ReceiptStore {
  const db = h.sqlite;
  const cache = new Map<string, Statement>();
  const q = <R, P extends SQLQueryBindings[]>(text: string): Statement<R, P> => {
    let st = cache.get(text);
    if (!st) cache.set(text, (st = db.prepare(text)));
    return st as unknown as Statement<R, P>;
  };
  const insert = (r: NewReceipt) =>
    q<unknown, SQLQueryBindings[]>(
      `INSERT OR IGNORE INTO recall_receipts(id, at, kind, via, session_id, turn, agent, project, prompt, prompt_hash, tokens, budget, injected, dropped)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      r.id,
      r.at,
      r.kind,
      r.via,
      r.sessionId,
      r.turn,
      r.agent,
      r.project,
      r.prompt,
      r.promptHash,
      r.tokens,
      r.budget,
      JSON.stringify(r.injected),
      JSON.stringify(r.dropped),
    );

  return {
    addReceipts: async (rows) => {
      if (rows.length === 0) return;
      await h.write(() => transact(db, () => rows.forEach(insert)));
    },

    listReceipts: async (f) => {
      const where: string[] = [];
      const params: SQLQueryBindings[] = [];
      if (f.sessionId) where.push("session_id = ?"), params.push(f.sessionId);
      if (f.agent) where.push("agent = ?"), params.push(f.agent);
      if (f.project) where.push("project = ?"), params.push(f.project);
      if (f.kind) where.push("kind = ?"), params.push(f.kind);
      // A prefix of an id: the injected JSON names full ids.
      if (f.memoryId) where.push("injected LIKE ? ESCAPE '\\'"), params.push(`%"id":"${f.memoryId.replace(/[%_\\]/g, "\\$&")}%`);
      if (f.before) where.push("(at < ? OR (at = ? AND id < ?))"), params.push(f.before.at, f.before.at, f.before.id);
      if (f.since !== undefined && f.since !== null) where.push("at >= ?"), params.push(f.since);
      const sql = `SELECT * FROM recall_receipts${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY at DESC, id DESC LIMIT ?`;
      return (db.query(sql).all(...params, f.limit) as Row[]).map(receiptFromRow);
    },

    receipt: async (id) => {
      const r = q<Row, [string]>("SELECT * FROM recall_receipts WHERE id = ?").get(id);
      return r ? receiptFromRow(r) : null;
    },

    latestShowing: async (memoryId) => {
      const r = q<Row, [string]>("SELECT * FROM recall_receipts WHERE kind = 'recall' AND injected LIKE ? ORDER BY at DESC, id DESC LIMIT 1").get(
        `%"id":"${memoryId}"%`,
      );
      return r ? receiptFromRow(r) : null;
    },

    addUsed: (receiptId, ids) =>
      h.write(() =>
        transact(db, () => {
          const r = q<{ used: string; injected: string }, [string]>("SELECT used, injected FROM recall_receipts WHERE id = ?").get(receiptId);
          if (!r) return [];
          const used = JSON.parse(r.used) as string[];
          const fresh = [...new Set(ids)].filter((id) => !used.includes(id));
          if (fresh.length)
            q<unknown, [string, string]>("UPDATE recall_receipts SET used = ? WHERE id = ?").run(JSON.stringify([...used, ...fresh]), receiptId);
          return fresh;
        }),
      ),

    useShown: (sessionId, ids, turn) =>
      h.write(() =>
        transact(db, () => {
          const rows = q<{ id: string; fresh: number }, [string, string, number | null]>(
            `SELECT memory_id AS id, used_turn IS NOT turn AS fresh FROM recall_shown
              WHERE session_id = ?1 AND memory_id IN (SELECT value FROM json_each(?2)) AND (?3 IS NULL OR turn = ?3)`,
          ).all(sessionId, JSON.stringify([...new Set(ids)]), turn);
          const fresh = rows.filter((r) => r.fresh).map((r) => r.id);
          if (fresh.length)
            q<unknown, [string, string]>("UPDATE recall_shown SET used_turn = turn WHERE session_id = ? AND memory_id IN (SELECT value FROM json_each(?))").run(
              sessionId,
              JSON.stringify(fresh),
            );
          return { fresh, already: rows.filter((r) => !r.fresh).map((r) => r.id) };
        }),
      ),

    sessions: async (limit, before) =>
      (
        q<Record<string, any>, [number | null, number | null, number]>(
          `SELECT session_id, max(agent) AS agent, max(project) AS project, min(at) AS first_at, max(at) AS last_at, count(*) AS prompts,
                  sum(tokens) AS tokens, sum(json_array_length(injected)) AS injected, sum(json_array_length(used)) AS used
             FROM recall_receipts WHERE kind = 'recall' AND session_id IS NOT NULL
            GROUP BY session_id HAVING ?1 IS NULL OR max(at) < ?2 ORDER BY last_at DESC, session_id LIMIT ?3`,
        ).all(before, before, limit) as Record<string, any>[]
      ).map(
        (r): SessionSummary => ({
          sessionId: r.session_id,
          agent: r.agent,
          project: r.project,
          firstAt: r.first_at,
          lastAt: r.last_at,
          prompts: r.prompts,
          tokens: r.tokens ?? 0,
          injected: r.injected ?? 0,
          used: r.used ?? 0,
        }),
      ),

    dailyTokens: async (start, days, scope: ProjectScope = null) =>
      scope === null
        ? q<DayTokens, [{ start: number; days: number }]>(dailyTokensSql("")).all({ start, days })
        : q<DayTokens, [{ start: number; days: number; scope: string }]>(dailyTokensSql(" AND r.project IN (SELECT value FROM json_each(:scope))")).all({
            start,
            days,
            scope: JSON.stringify(scope),
          }),

    prune: (before, max) =>
      h.write(() =>
        transact(db, () => {
          let n = q<unknown, [number]>("DELETE FROM recall_receipts WHERE at < ?").run(before).changes;
          const over = q<{ n: number }, []>("SELECT count(*) AS n FROM recall_receipts").get()!.n - max;
          if (over > 0)
            n += q<unknown, [number]>("DELETE FROM recall_receipts WHERE id IN (SELECT id FROM recall_receipts ORDER BY at, id LIMIT ?)").run(over).changes;
          return n;
        }),
      ),
  };
}
