import type { ReceiptRow, ReceiptStore, SessionSummary } from "../../core/receipts";
import type { ProjectScope } from "../../core/scope";
import type { PgHandle } from "./open";

const DAY_MS = 86_400_000;

const fromRow = (r: Record<string, any>): ReceiptRow => ({
  id: r.id,
  at: Number(r.at),
  kind: r.kind,
  via: r.via,
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

/** receipts/ on PostgreSQL: the table of migrations/0005_receipts.sql, in raw SQL (JSON held as text, as SQLite holds it). */
export function pgReceipts(h: PgHandle): ReceiptStore {
  const S = h.schema;
  return {
    addReceipts: async (rows) => {
      if (rows.length === 0) return;
      const json = JSON.stringify(
        rows.map((r) => ({ ...r, sessionId: r.sessionId, injected: JSON.stringify(r.injected), dropped: JSON.stringify(r.dropped) })),
      );
      // One statement for the batch: its rows arrive as one JSON parameter.
      await h.sql.unsafe(
        `INSERT INTO ${S}.recall_receipts (id, at, kind, via, session_id, turn, agent, project, prompt, prompt_hash, tokens, budget, injected, dropped)
         SELECT x->>'id', (x->>'at')::bigint, x->>'kind', x->>'via', x->>'sessionId', (x->>'turn')::int, x->>'agent', x->>'project', x->>'prompt',
                x->>'promptHash', (x->>'tokens')::int, (x->>'budget')::int, x->>'injected', x->>'dropped'
           FROM jsonb_array_elements($1::jsonb) AS x
         ON CONFLICT (id) DO NOTHING`,
        [json],
      );
    },

    listReceipts: async (f) => {
      const where: string[] = [];
      const params: unknown[] = [];
      const p = (v: unknown) => (params.push(v), `$${params.length}`);
      if (f.sessionId) where.push(`session_id = ${p(f.sessionId)}::text`);
      if (f.agent) where.push(`agent = ${p(f.agent)}::text`);
      if (f.project) where.push(`project = ${p(f.project)}::text`);
      if (f.kind) where.push(`kind = ${p(f.kind)}::text`);
      if (f.memoryId) where.push(`strpos(injected, ${p(`"id":"${f.memoryId}`)}::text) > 0`);
      if (f.before) where.push(`(at < ${p(f.before.at)}::bigint OR (at = ${p(f.before.at)}::bigint AND id < ${p(f.before.id)}::text))`);
      if (f.since !== undefined && f.since !== null) where.push(`at >= ${p(f.since)}::bigint`);
      const rows = await h.sql.unsafe(
        `SELECT * FROM ${S}.recall_receipts${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY at DESC, id DESC LIMIT ${p(f.limit)}::int`,
        params,
      );
      return (rows as Record<string, any>[]).map(fromRow);
    },

    receipt: async (id) => {
      const [r] = await h.sql.unsafe(`SELECT * FROM ${S}.recall_receipts WHERE id = $1::text`, [id]);
      return r ? fromRow(r) : null;
    },

    latestShowing: async (memoryId) => {
      const [r] = await h.sql.unsafe(
        `SELECT * FROM ${S}.recall_receipts WHERE kind = 'recall' AND strpos(injected, $1::text) > 0 ORDER BY at DESC, id DESC LIMIT 1`,
        [`"id":"${memoryId}"`],
      );
      return r ? fromRow(r) : null;
    },

    addUsed: async (receiptId, ids) => {
      const wanted = [...new Set(ids)];
      // One statement: the row lock orders two detections of one receipt; only ids not there yet are added.
      const [r] = await h.sql.unsafe(
        `WITH cur AS (SELECT used FROM ${S}.recall_receipts WHERE id = $1::text FOR UPDATE),
              fresh AS (SELECT coalesce(jsonb_agg(v), '[]'::jsonb) AS f FROM jsonb_array_elements_text($2::jsonb) v, cur WHERE NOT (cur.used::jsonb ? v)),
              upd AS (UPDATE ${S}.recall_receipts r SET used = (r.used::jsonb || fresh.f)::text FROM fresh WHERE r.id = $1::text AND jsonb_array_length(fresh.f) > 0)
         SELECT (SELECT f FROM fresh)::text AS fresh`,
        [receiptId, JSON.stringify(wanted)],
      );
      return r?.fresh ? (JSON.parse(r.fresh) as string[]) : [];
    },

    useShown: async (sessionId, ids, turn) => {
      // One statement: the row locks order two detections of one showing (the second sees it counted).
      const rows = await h.sql.unsafe(
        `WITH cur AS (SELECT memory_id, used_turn IS DISTINCT FROM turn AS fresh FROM ${S}.recall_shown
                       WHERE session_id = $1::text AND memory_id IN (SELECT jsonb_array_elements_text($2::jsonb))
                         AND ($3::int IS NULL OR turn = $3::int) FOR UPDATE),
              upd AS (UPDATE ${S}.recall_shown r SET used_turn = r.turn FROM cur WHERE r.session_id = $1::text AND r.memory_id = cur.memory_id AND cur.fresh)
         SELECT memory_id AS id, fresh FROM cur`,
        [sessionId, JSON.stringify([...new Set(ids)]), turn],
      );
      const list = rows as { id: string; fresh: boolean }[];
      return { fresh: list.filter((r) => r.fresh).map((r) => r.id), already: list.filter((r) => !r.fresh).map((r) => r.id) };
    },

    sessions: async (limit, before) => {
      const rows = await h.sql.unsafe(
        `SELECT session_id, max(agent) AS agent, max(project) AS project, min(at)::float8 AS first_at, max(at)::float8 AS last_at, count(*)::int AS prompts,
                coalesce(sum(tokens), 0)::int AS tokens, coalesce(sum(jsonb_array_length(injected::jsonb)), 0)::int AS injected,
                coalesce(sum(jsonb_array_length(used::jsonb)), 0)::int AS used
           FROM ${S}.recall_receipts WHERE kind = 'recall' AND session_id IS NOT NULL
          GROUP BY session_id HAVING $1::bigint IS NULL OR max(at) < $1::bigint ORDER BY last_at DESC, session_id LIMIT $2::int`,
        [before, limit],
      );
      return (rows as Record<string, any>[]).map(
        (r): SessionSummary => ({
          sessionId: r.session_id,
          agent: r.agent,
          project: r.project,
          firstAt: r.first_at,
          lastAt: r.last_at,
          prompts: r.prompts,
          tokens: r.tokens,
          injected: r.injected,
          used: r.used,
        }),
      );
    },

    dailyTokens: async (start, days, scope: ProjectScope = null) => {
      // Within a scope: receipts of its projects only (one JSON parameter, $3).
      const rows = await h.sql.unsafe(
        `SELECT ((at - $1::bigint) / ${DAY_MS})::int AS i, coalesce(sum(tokens), 0)::int AS tokens,
                coalesce(sum(jsonb_array_length(injected::jsonb)), 0)::int AS injected, coalesce(sum(jsonb_array_length(used::jsonb)), 0)::int AS used
           FROM ${S}.recall_receipts WHERE kind = 'recall' AND at >= $1::bigint AND at < $2::bigint${scope === null ? "" : " AND project IN (SELECT jsonb_array_elements_text($3::jsonb))"} GROUP BY 1`,
        scope === null ? [start, start + days * DAY_MS] : [start, start + days * DAY_MS, JSON.stringify(scope)],
      );
      const by = new Map((rows as { i: number; tokens: number; injected: number; used: number }[]).map((r) => [r.i, r]));
      return Array.from({ length: days }, (_, i) => by.get(i) ?? { i, tokens: 0, injected: 0, used: 0 });
    },

    prune: async (before, max) => {
      const gone = await h.sql.unsafe(`DELETE FROM ${S}.recall_receipts WHERE at < $1::bigint RETURNING id`, [before]);
      const over = await h.sql.unsafe(
        `DELETE FROM ${S}.recall_receipts WHERE id IN (SELECT id FROM ${S}.recall_receipts ORDER BY at DESC, id DESC OFFSET $1::int) RETURNING id`,
        [max],
      );
      return gone.length + over.length;
    },
  };
}
