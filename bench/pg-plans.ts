/**
 * Query plans of the PostgreSQL engine's /search, /recent and ingest-link
 * statements on a real server (`bun bench/pg-plans.ts <postgres url> <schema>
 * [--queries 20] [--only recent|nearest|rows|fulltext|link]`): EXPLAIN (ANALYZE,
 * BUFFERS) of each statement as the engine sends it, over the HTTP bench's
 * queries, with the execution time and buffers summed per statement shape.
 * Diagnosis only: timings under EXPLAIN include its instrumentation.
 */
import { SQL } from "bun";
import { parseArgs } from "node:util";
import { hashEmbed } from "../src/embed/fallback";
import { nearestStatement } from "../src/store/postgres/nearest";
import { fullTextStatement, neighboursStatement, scoringStatement } from "../src/store/postgres/search";
import { GRAPH_SEEDS, SCORE_CONTENT_CHARS } from "../src/core/search/tuning";
import { NoteGenerator } from "./lib/corpus";

const { values: args, positionals } = parseArgs({
  options: { queries: { type: "string" }, only: { type: "string" }, verbose: { type: "boolean" } },
  allowPositionals: true,
});
const [url, schema] = positionals;
if (!url || !schema) throw new Error("usage: bun bench/pg-plans.ts <postgres url> <schema> [--queries N] [--only ...]");
const sql = new SQL({ url, prepare: false, max: 1 });
const gen = new NoteGenerator(7);
const queries = Array.from({ length: Number(args.queries ?? 20) }, () => gen.query());
const S = schema;
const sums = new Map<string, { n: number; ms: number; shared: number; read: number; worst: string; worstMs: number }>();

async function explain(name: string, text: string, params: unknown[], setup: string[] = []) {
  const plan = await sql.begin(async (tx) => {
    for (const s of setup) await tx.unsafe(s);
    return tx.unsafe(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params as any[]);
  });
  const p = (plan[0]["QUERY PLAN"] ?? Object.values(plan[0])[0]) as any;
  const j = typeof p === "string" ? JSON.parse(p)[0] : p[0];
  const e = sums.get(name) ?? { n: 0, ms: 0, shared: 0, read: 0, worst: "", worstMs: 0 };
  e.n++;
  e.ms += j["Execution Time"] + j["Planning Time"];
  e.shared += j.Plan["Shared Hit Blocks"] ?? 0;
  e.read += j.Plan["Shared Read Blocks"] ?? 0;
  if (j["Execution Time"] > e.worstMs) {
    e.worstMs = j["Execution Time"];
    const t = await sql.begin(async (tx) => {
      for (const s of setup) await tx.unsafe(s);
      return tx.unsafe(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, params as any[]);
    });
    e.worst = (t as any[]).map((r) => r["QUERY PLAN"]).join("\n");
  }
  sums.set(name, e);
}

const vec = (q: string) => `[${Array.from(hashEmbed(q)).join(",")}]`;
const only = args.only;
const now = Date.now();
for (const q of queries) {
  const v = vec(q.query);
  if (!only || only === "nearest") {
    // The engine's own statement (src/store/postgres/nearest.ts): its settings, then the query.
    const split = (text: string) => text.split(/;\n/) as [string, string];
    const [set, all] = split(nearestStatement(S, hashEmbed(q.query), 60, null));
    await explain("nearest", all, [], [set]);
    if (q.project) {
      const [pset, project] = split(nearestStatement(S, hashEmbed(q.query), 60, q.project));
      await explain("nearest project", project, [], [pset]);
    }
  }
  if (!only || only === "rows") {
    // What ranking reads after the retrievers (src/store/postgres/search.ts): the candidates' scoring rows with
    // SCORE_CONTENT_CHARS of content, and the graph hop from the best GRAPH_SEEDS, far ends' rows included.
    const seqs = (await sql.unsafe(`SELECT seq::float8 AS seq FROM ${S}.memory_vec ORDER BY embedding <=> $1::vector LIMIT 60`, [v])).map(
      (r: { seq: number }) => r.seq,
    );
    await explain("scoring rows (60)", scoringStatement(S), [seqs, SCORE_CONTENT_CHARS]);
    await explain("neighbours (8 seeds)", neighboursStatement(S), [seqs.slice(0, GRAPH_SEEDS), SCORE_CONTENT_CHARS]);
  }
  if (!only || only === "fulltext") {
    const words = q.query
      .toLowerCase()
      .split(/\W+/)
      .filter((w) => w.length > 2);
    const or = words.map((w) => `'${w}'`).join(" | ");
    await explain("fulltext", fullTextStatement(S, false), [or, or, 60]);
  }
  if (!only || only === "link") {
    await explain(
      "link nearest (ingest)",
      `SELECT m.id, 1 - (v.embedding <=> $3::vector) AS sim FROM ${S}.memory_vec v JOIN ${S}.memories m ON m.seq = v.seq
        WHERE m.id <> $1 AND m.id NOT IN (SELECT jsonb_array_elements_text($5::jsonb)) AND ($4::text IS NULL OR m.project = $4)
        ORDER BY v.embedding <=> $3::vector LIMIT 3`,
      ["x", 0, v, q.project ?? "atlas", "[]"],
    );
  }
}
if (!only || only === "recent") {
  for (const project of [null, "atlas", "billing"]) {
    await explain(
      `recent scan ${project ? "project" : "all"}`,
      `SELECT m.seq FROM ${S}.memories m WHERE ($2::text IS NULL OR m.project = $2) ORDER BY (m.strength * power(0.5, greatest(0, $1::float8 - m.refreshed_at) / 2592000000.0) + ln(1 + m.link_count) + exp(-(greatest(0, $1::float8 - m.created_at)) / 604800000.0)) DESC, m.seq DESC LIMIT 12`,
      [now, project],
    );
    for (const col of ["strength", "link_count", "created_at"])
      await explain(
        `recent list ${col} ${project ? "project" : "all"}`,
        `SELECT seq::float8 AS seq, ${col}::float8 AS v FROM ${S}.memories ${project ? "WHERE project = $2" : ""} ORDER BY ${col} DESC LIMIT $1`,
        project ? [1000, project] : [1000],
      );
  }
}
for (const [name, e] of sums) {
  console.log(
    `=== ${name}: ${e.n}x, ${(e.ms / e.n).toFixed(2)} ms a statement (plan + execution), ${(e.shared / e.n).toFixed(0)} shared hits + ${(e.read / e.n).toFixed(0)} reads a statement`,
  );
  if (args.verbose) console.log(e.worst);
}
await sql.close();
