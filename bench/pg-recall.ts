/**
 * pgvector HNSW recall@10 against exact float32 cosine, through the
 * PostgreSQL engine's own search store (src/store/postgres/search.ts), on a
 * PGlite database in this process served over TCP:
 *   bun bench/pg-recall.ts [--vectors 5000] [--queries 100] [--ef 40,100,200] [--exact-rows 0]
 * The offline embedder's (sparse) vectors of the bench corpus, and the same
 * vectors under a fixed random rotation (dense, every cosine unchanged), as
 * bench/lib/vectors.ts measures the SQLite index. Prints one JSON object.
 */
import { SQL } from "bun";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { loadavg } from "node:os";
import { PG_MIGRATIONS } from "../src/store/postgres/migrations";
import { pgSearch } from "../src/store/postgres/search";
import type { PgHandle } from "../src/store/postgres/open";
import { hashEmbed } from "../src/embed/fallback";
import { NoteGenerator } from "./lib/corpus";
import { round, summarize } from "./lib/stats";
import { rotation } from "./lib/vectors";

const { values: args } = parseArgs({
  options: {
    vectors: { type: "string" },
    queries: { type: "string" },
    ef: { type: "string" },
    migration: { type: "string" },
    "exact-rows": { type: "string" },
  },
});
const N = Number(args.vectors ?? 5000);
const Q = Number(args.queries ?? 100);
const EFS = (args.ef ?? "40,100,200").split(",").map(Number);
/** Groups up to this many rows are searched exactly (the engine's default); 0 measures HNSW within a project. */
const EXACT_ROWS = args["exact-rows"] === undefined ? undefined : Number(args["exact-rows"]);

const { PGlite } = await import("@electric-sql/pglite");
const { vector } = await import("@electric-sql/pglite-pgvector");
const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
const db = await PGlite.create({ extensions: { vector } });
await db.exec("CREATE EXTENSION IF NOT EXISTS vector");
const server = new PGLiteSocketServer({ db, port: 0, host: "127.0.0.1", maxConnections: 1000 });
await server.start();
const sql = new SQL({ url: `postgres://postgres@${server.getServerConn()}/postgres`, prepare: false, max: 4 });

function exactTop(vectors: Float32Array[], groups: (string | null)[], q: Float32Array, k: number, group: string | null): number[] {
  const scored: { seq: number; s: number }[] = [];
  for (let i = 0; i < vectors.length; i++) {
    if (group !== null && groups[i] !== group) continue;
    let d = 0;
    for (let j = 0; j < q.length; j++) d += vectors[i][j] * q[j];
    scored.push({ seq: i + 1, s: d });
  }
  return scored
    .sort((a, b) => b.s - a.s)
    .slice(0, k)
    .map((x) => x.seq);
}

async function run(dense: boolean, schema: string) {
  // Every migration of the engine (its vector search reads memory_vec.project, 0009), or the one file given.
  const migrations = args.migration ? [readFileSync(args.migration, "utf8")] : PG_MIGRATIONS.map((m) => m.sql);
  await sql.unsafe(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
  for (const m of migrations) await sql.begin((tx) => tx.unsafe(m.replaceAll("__SCHEMA__", schema)).simple());
  const gen = new NoteGenerator(42);
  const qgen = new NoteGenerator(7);
  const rotate = dense ? rotation(99) : (v: Float32Array) => v;
  const vectors: Float32Array[] = [];
  const groups: (string | null)[] = [];
  const t0 = performance.now();
  for (let at = 0; at < N; at += 500) {
    const batch = Array.from({ length: Math.min(500, N - at) }, () => gen.note());
    const rows = batch.map((note) => {
      const v = rotate(hashEmbed(note.content));
      vectors.push(v);
      groups.push(note.project);
      return { note, v };
    });
    await sql.begin(async (tx) => {
      for (const { note, v } of rows) {
        const [r] = await tx.unsafe(
          `INSERT INTO ${schema}.memories(id, content, memory_type, project, created_at, updated_at, refreshed_at) VALUES ($1, $2, 'knowledge', $3, 0, 0, 0) RETURNING seq`,
          [crypto.randomUUID(), note.content, note.project],
        );
        await tx.unsafe(`INSERT INTO ${schema}.memory_vec(seq, embedding) VALUES ($1, $2::vector)`, [r.seq, `[${Array.from(v).join(",")}]`]);
      }
    });
  }
  const loadS = (performance.now() - t0) / 1000;
  const queries = Array.from({ length: Q }, () => qgen.query()).map((q, i) => ({
    qv: rotate(hashEmbed(q.query)),
    project: q.project ?? groups[(i * 7919) % N],
  }));
  const truth = queries.map(({ qv, project }) => ({
    all: new Set(exactTop(vectors, groups, qv, 10, null)),
    project: new Set(exactTop(vectors, groups, qv, 10, project)),
  }));
  const out: Record<string, unknown> = { vectors: N, queries: Q, insert_seconds: round(loadS, 1) };
  for (const ef of EFS) {
    const store = pgSearch({ sql, schema, inTransaction: false, ready: async () => {} } as unknown as PgHandle, { efSearch: ef, exactRows: EXACT_ROWS });
    let hit = 0;
    let hitProject = 0;
    const times: number[] = [];
    const projectTimes: number[] = [];
    for (const [i, { qv, project }] of queries.entries()) {
      let t = performance.now();
      const got = await store.nearest(qv, 10, null);
      times.push(performance.now() - t);
      t = performance.now();
      const gotProject = await store.nearest(qv, 10, project);
      projectTimes.push(performance.now() - t);
      hit += got.filter((h) => truth[i].all.has(h.seq)).length / Math.max(1, truth[i].all.size);
      hitProject += gotProject.filter((h) => truth[i].project.has(h.seq)).length / Math.max(1, truth[i].project.size);
    }
    out[`ef_search_${ef}`] = {
      recall_at_10: round(hit / Q, 3),
      recall_at_10_project: round(hitProject / Q, 3),
      search_ms: summarize(times),
      search_project_ms: summarize(projectTimes),
    };
  }
  return out;
}

const result: Record<string, unknown> = {
  bench: "pg-recall",
  date: new Date().toISOString(),
  load_average_at_start: loadavg().map((x) => round(x)),
  database: String((await sql`SELECT version() AS v`)[0].v).split(" on ")[0],
};
try {
  result.sparse = await run(false, "recall_sparse");
  result.dense = await run(true, "recall_dense");
  result.load_average_at_end = loadavg().map((x) => round(x));
} finally {
  await sql.close();
  await server.stop();
  await db.close();
}
console.log(JSON.stringify(result, null, 2));
