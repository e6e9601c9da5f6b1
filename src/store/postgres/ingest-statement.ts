import type { NewMemoryRow } from "../../core/memories";
import { sqlString, vectorText } from "./nearest";

/**
 * One ingest's writes as one simple-protocol message (graph.ts,
 * insertAndLink): the memory, its vector and its tags in one statement, then
 * the similarity links in a second, which sees the first's rows (the new
 * vector in the HNSW graph, the memory the links reference) as the separate
 * statements did. Values are inlined, as nearest.ts does: text as E''
 * literals, numbers checked finite, the vector numbers only. Sent alone it is
 * its own (implicit) transaction: both statements or neither. Six round trips
 * per ingest (BEGIN, the memory, its vector, its tags, the links, COMMIT)
 * become one, or three inside a transaction (an ingest with a session to
 * claim or anchors), and memsvc builds one message instead of four statements.
 *
 * The link statement is graph.ts linkToNearest's, word for word, with its
 * parameters inlined: the planner sees the same values (an unnamed statement
 * is planned with its parameters), so it takes the same plan and finds the
 * same neighbours. The vector row's project is filled by its BEFORE INSERT
 * trigger (migration 0010), which sees the memory inserted by the same
 * statement (a volatile trigger function sees its statement's earlier rows).
 */

const text = (v: string | null | undefined) => (v === null || v === undefined ? "NULL" : sqlString(v));

function num(v: number, what: string): string {
  if (!Number.isFinite(v)) throw new Error(`ingest statement: ${what} is not a finite number`);
  return String(v);
}

const int = (v: number, what: string) => num(Math.trunc(v), what);

export interface IngestLinks {
  limit: number;
  minSimilarity: number;
  /** Never linked: the memory itself and the memories written in the same batch. */
  exclude: readonly string[];
  now: number;
}

/** The message; its results are [[{ seq }], [one row per link written]]. */
export function ingestStatement(schema: string, r: NewMemoryRow, link: IngestLinks): string {
  const S = schema;
  const vec = `'${vectorText(r.vector)}'::vector`;
  const tags =
    r.tags.length === 0
      ? ""
      : `,
  t AS (INSERT INTO ${S}.memory_tags (memory_id, tag, weight)
    SELECT m.id, x.tag, x.weight FROM m, (VALUES ${r.tags.map((g) => `(${text(g.tag)}, ${num(g.weight, "tag weight")}::float8)`).join(", ")}) x(tag, weight))`;
  const insert = `WITH m AS (INSERT INTO ${S}.memories (id, content, memory_type, project, source_agent, source_agent_id, source_domain,
      source_session, privacy, created_at, updated_at, refreshed_at, strength, created_by)
    VALUES (${[
      text(r.id),
      text(r.content),
      text(r.memoryType),
      text(r.project),
      text(r.sourceAgent),
      text(r.sourceAgentId),
      text(r.sourceDomain),
      text(r.sourceSession),
      text(r.privacy),
      int(r.createdAt, "created_at"),
      int(r.updatedAt, "updated_at"),
      int(r.refreshedAt, "refreshed_at"),
      `${num(r.strength, "strength")}::float8`,
      text(r.createdBy ?? null),
    ].join(", ")})
    RETURNING seq, id),
  v AS (INSERT INTO ${S}.memory_vec (seq, embedding) SELECT seq, ${vec} FROM m)${tags}
SELECT seq::float8 AS seq FROM m`;
  const id = text(r.id);
  const project = r.project === null ? "NULL::text" : `${text(r.project)}::text`;
  const exclude = `${text(JSON.stringify(link.exclude))}::jsonb`;
  // graph.ts linkToNearest, with its parameters inlined (see there for the locking).
  const links = `WITH near AS (
  SELECT m.id, 1 - (v.embedding <=> ${vec}) AS sim
    FROM ${S}.memory_vec v JOIN ${S}.memories m ON m.seq = v.seq
   WHERE m.id <> ${id} AND m.id NOT IN (SELECT jsonb_array_elements_text(${exclude})) AND (${project} IS NULL OR m.project = ${project})
   ORDER BY v.embedding <=> ${vec}
   LIMIT ${int(link.limit, "limit")}),
kept AS (
  SELECT m.id FROM ${S}.memories m
   WHERE m.id IN (SELECT id FROM near WHERE sim >= ${num(link.minSimilarity, "minSimilarity")}::float8)
   ORDER BY m.id
     FOR KEY SHARE)
INSERT INTO ${S}.links AS l (from_id, to_id, relationship, weight, created_at)
SELECT ${id}, n.id, 'related', least(1, greatest(0, n.sim)), ${int(link.now, "now")}::bigint FROM near n JOIN kept USING (id)
 ORDER BY n.id
ON CONFLICT (from_id, to_id, relationship) DO UPDATE SET weight = greatest(l.weight, excluded.weight)
RETURNING 1`;
  return `${insert};\n${links}`;
}
