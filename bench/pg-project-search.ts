/**
 * Vector search within a project on a real PostgreSQL, by path: the engine's
 * own statement (src/store/postgres/nearest.ts) forced to HNSW's iterative
 * scan (exactRows 0) and to the exact scan of the group, per project of a
 * seeded schema (`bench/lib/pg-bench.ts` seeds one; `bun run bench --engine
 * both` leaves bench_<size>):
 *   bun bench/pg-project-search.ts <postgres url> <schema> [--queries 20] [--projects 6] [--paths before,hnsw,exact,engine] [--unfiltered]
 * Per path and project: recall@10 against the exact top 10, EXPLAIN (ANALYZE,
 * BUFFERS) execution time and buffers, and the backend's CPU (from /proc: the
 * server must run on this machine) per statement without EXPLAIN, and the
 * engine's default choice. Prints one JSON object.
 */
import { SQL } from "bun";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { hashEmbed } from "../src/embed/fallback";
import { nearestStatement } from "../src/store/postgres/nearest";
import { PG_EXACT_GROUP_ROWS } from "../src/store/postgres/tuning";
import { NoteGenerator } from "./lib/corpus";
import { round, summarize } from "./lib/stats";

const { values: args, positionals } = parseArgs({
  options: { queries: { type: "string" }, projects: { type: "string" }, k: { type: "string" }, paths: { type: "string" }, unfiltered: { type: "boolean" } },
  allowPositionals: true,
});
const [url, schema] = positionals;
if (!url || !schema) throw new Error("usage: bun bench/pg-project-search.ts <postgres url> <schema> [--queries N] [--projects N]");
const Q = Number(args.queries ?? 20);
const K = Number(args.k ?? 10);
const sql = new SQL({ url, prepare: false, max: 1 });
const [{ pid }] = await sql.unsafe("SELECT pg_backend_pid() AS pid");
const cpuMs = () => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8");
  const s = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return (Number(s[11]) + Number(s[12])) * 10;
};

const groups = (await sql.unsafe(`SELECT coalesce(project, '') AS project, count(*)::int AS n FROM ${schema}.memories GROUP BY 1 ORDER BY 2 DESC`)) as {
  project: string;
  n: number;
}[];
// The largest, the smallest and some between.
const P = Number(args.projects ?? 6);
const picked = groups.length <= P ? groups : Array.from({ length: P }, (_, i) => groups[Math.round((i * (groups.length - 1)) / (P - 1))]);
const gen = new NoteGenerator(7);
/** before: the statement of commit 75a6b50; hnsw: this one forced to HNSW; exact: forced to the exact scan; engine: its own choice. */
const PATHS = (args.paths ?? "before,hnsw,exact,engine").split(",") as ("before" | "hnsw" | "exact" | "engine")[];
const threshold = { before: "before", hnsw: 0, exact: 1e9, engine: PG_EXACT_GROUP_ROWS } as const;
const vectors = Array.from({ length: Q }, () => hashEmbed(gen.query().query));

/** The statement before issue 36's exact path (commit 75a6b50): HNSW with the iterative scan, the project from a join with memories. */
function before(v: Float32Array, project: string | null): string {
  const vt = `'[${Array.from(v).join(",")}]'::vector`;
  const join = project === "" ? "m.project IS NULL" : `m.project = '${String(project).replaceAll("'", "''")}'`;
  return `SELECT set_config('hnsw.ef_search', '200', true), set_config('hnsw.iterative_scan', 'relaxed_order', true);
    SELECT v.seq::float8 AS seq, 1 - (v.embedding <=> ${vt}) AS similarity FROM ${schema}.memory_vec v JOIN ${schema}.memories m ON m.seq = v.seq AND ${join}
     WHERE v.seq <= coalesce((SELECT value::bigint FROM ${schema}.meta WHERE key = 'reembed_cursor'), 9223372036854775807)
     ORDER BY v.embedding <=> ${vt} LIMIT ${K}`;
}

/** exactRows: the engine's statement with that threshold; "before": the statement before. */
async function run(project: string | null, v: Float32Array, exactRows: number | "before") {
  const text = exactRows === "before" ? before(v, project) : nearestStatement(schema, v, K, project, { exactRows });
  const [settings, query] = text.split(/;\n/);
  const plan = await sql.begin(async (tx) => {
    await tx.unsafe(settings);
    return tx.unsafe(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${query}`);
  });
  const j = (plan[0]["QUERY PLAN"] as any)[0];
  const c0 = cpuMs();
  const rows = (await sql.unsafe(text).simple()) as unknown as unknown[][];
  const cpu = cpuMs() - c0;
  const seqs = (rows[1] as { seq: number; similarity: number }[])
    .map((r) => ({ seq: Number(r.seq), similarity: Number(r.similarity) }))
    .sort((a, b) => b.similarity - a.similarity || a.seq - b.seq)
    .map((r) => r.seq);
  const p = j.Plan;
  return {
    ms: j["Execution Time"] + j["Planning Time"],
    buffers: (p["Shared Hit Blocks"] ?? 0) + (p["Shared Read Blocks"] ?? 0),
    read: p["Shared Read Blocks"] ?? 0,
    cpu,
    seqs,
  };
}

const out: Record<string, unknown> = {
  schema,
  queries: Q,
  k: K,
  load_average_at_start: loadavg().map((x) => round(x)),
  default_exact_rows: PG_EXACT_GROUP_ROWS,
};
const perProject: Record<string, unknown>[] = [];
// null: the unfiltered search (HNSW at ef_search 200 whatever the path), the reference for a group as large as the store.
const total = groups.reduce((a, g) => a + g.n, 0);
for (const g of [...(args.unfiltered ? [{ project: null, n: total }] : []), ...picked] as { project: string | null; n: number }[]) {
  const blank = () => ({ ms: [] as number[], buffers: 0, read: 0, cpu: 0, hits: 0 });
  const acc = Object.fromEntries(PATHS.map((p) => [p, blank()]));
  for (const v of vectors) {
    // The truth: every row of the group scored (ORDER BY a distance no index matches).
    const truth = new Set(
      (
        (await sql.unsafe(
          `SELECT v.seq::float8 AS seq FROM ${schema}.memory_vec v JOIN ${schema}.memories m ON m.seq = v.seq
            WHERE ${g.project === null ? "true" : g.project === "" ? "m.project IS NULL" : "m.project = $2"} ORDER BY (v.embedding <=> $1::vector) + 0, v.seq LIMIT ${K}`,
          g.project === null || g.project === "" ? [`[${Array.from(v).join(",")}]`] : [`[${Array.from(v).join(",")}]`, g.project],
        )) as { seq: number }[]
      ).map((r) => Number(r.seq)),
    );
    for (const path of PATHS) {
      const r = await run(g.project, v, threshold[path]);
      const a = acc[path];
      a.ms.push(r.ms);
      a.buffers += r.buffers;
      a.read += r.read;
      a.cpu += r.cpu;
      a.hits += r.seqs.filter((s) => truth.has(s)).length;
    }
  }
  const fig = (a: ReturnType<typeof blank>) => ({
    recall_at_k: round(a.hits / (Q * Math.min(K, g.n)), 3),
    explain_ms: summarize(a.ms),
    buffers_per_query: Math.round(a.buffers / Q),
    read_per_query: Math.round(a.read / Q),
    backend_cpu_ms_per_query: round(a.cpu / Q, 1),
  });
  const row = { project: g.project, rows: g.n, ...Object.fromEntries(PATHS.map((p) => [p, fig(acc[p])])) };
  perProject.push(row);
  console.error(JSON.stringify(row));
}
out.projects = perProject;
out.load_average_at_end = loadavg().map((x) => round(x));
console.log(JSON.stringify(out, null, 2));
await sql.close();
