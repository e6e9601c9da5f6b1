/**
 * Where PostgreSQL spends a request (`bun bench/pg-explain.ts <cache tar>
 * [--queries 40] [--min-ms 5]`): starts PGlite from a seeded schema of the
 * bench cache (bench/lib/pg-cache.ts) in this process with auto_explain
 * logging every statement slower than --min-ms with EXPLAIN (ANALYZE,
 * BUFFERS), runs a memsvc server over it, sends the bench's /search,
 * /recall-index and /recent requests, and prints the plans grouped by
 * statement (the slowest first) with the database process's CPU per request.
 * Per-node timing (--timing) costs a clock read through WebAssembly per row.
 * Diagnosis only: auto_explain's instrumentation slows what it measures.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { PGlite } from "@electric-sql/pglite";
import { auto_explain } from "@electric-sql/pglite/contrib/auto_explain";
import { vector } from "@electric-sql/pglite-pgvector";
import { PgliteFront } from "../test/helpers/pglite-front";
import { NoteGenerator } from "./lib/corpus";
import { searchPath } from "./lib/load";
import { startServer } from "./lib/http-run";
import type { PgCacheMeta } from "./lib/pg-cache";
import { serverCommand } from "./lib/server";

const { values: args, positionals } = parseArgs({
  options: { queries: { type: "string" }, "min-ms": { type: "string" }, only: { type: "string" }, timing: { type: "boolean" } },
  allowPositionals: true,
});
const tar = positionals[0];
if (!tar) throw new Error("usage: bun bench/pg-explain.ts <cache .tar> [--queries N] [--min-ms M] [--only search|recall|recent]");
const meta = JSON.parse(readFileSync(tar.replace(/\.tar$/, ".json"), "utf8")) as PgCacheMeta;
const QUERIES = Number(args.queries ?? 40);
const MIN_MS = Number(args["min-ms"] ?? 5);

const logs: string[] = [];
const db = await PGlite.create({
  loadDataDir: Bun.file(tar),
  extensions: { vector, auto_explain },
  onStderr: (text) => {
    logs.push(text);
    return true;
  },
});
if (!meta.vacuumed) {
  // As the bench does for entries dumped before `memsvc migrate` ended with it (bench/lib/pg-cache.ts).
  const tables = (await db.query<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = $1", [meta.schema])).rows;
  await db.exec(`VACUUM (ANALYZE) ${tables.map((t) => `${meta.schema}."${t.tablename}"`).join(", ")}`);
}
await db.exec(`LOAD 'auto_explain';
  SET auto_explain.log_min_duration = '${MIN_MS}ms'; SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on;
  SET auto_explain.log_timing = ${args.timing ? "on" : "off"};
  SET auto_explain.log_parameter_max_length = 200`);
const front = new PgliteFront(db);
const port = await front.listen("127.0.0.1");
const url = `postgres://postgres:x@127.0.0.1:${port}/postgres`;
const server = await startServer({
  engine: "postgres",
  home: mkdtempSync(join(tmpdir(), "memsvc-explain-")),
  cmd: serverCommand("source"),
  pg: { url, schema: meta.schema },
});
const gen = new NoteGenerator(7);
const queries = Array.from({ length: QUERIES }, () => gen.query());
const cpu = () => process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000;

async function phase(name: string, requests: (() => Promise<Response>)[]): Promise<void> {
  logs.length = 0;
  const c0 = cpu();
  const t0 = performance.now();
  for (const r of requests) {
    const res = await r();
    if (!res.ok) throw new Error(`${name}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  }
  const wall = (performance.now() - t0) / requests.length;
  const dbCpu = (cpu() - c0) / requests.length;
  const plans = logs
    .join("")
    .split(/(?=LOG: {2}duration:)/)
    .filter((l) => l.startsWith("LOG:  duration:"));
  const byStatement = new Map<string, { n: number; ms: number; worst: string; worstMs: number }>();
  for (const p of plans) {
    const ms = Number(/duration: ([\d.]+) ms/.exec(p)?.[1] ?? 0);
    const text = (/Query Text: ([\s\S]*?)(?:Query Parameters:|\(cost=)/.exec(p)?.[1] ?? "?").replace(/\s+/g, " ").slice(0, 200);
    const e = byStatement.get(text) ?? { n: 0, ms: 0, worst: "", worstMs: 0 };
    e.n++;
    e.ms += ms;
    if (ms > e.worstMs) Object.assign(e, { worst: p, worstMs: ms });
    byStatement.set(text, e);
  }
  console.log(
    `\n=== ${name}: ${requests.length} requests, ${wall.toFixed(1)} ms wall and ${dbCpu.toFixed(1)} ms database-process CPU a request; statements over ${MIN_MS} ms:`,
  );
  for (const [text, e] of [...byStatement].sort((a, b) => b[1].ms - a[1].ms).slice(0, 6)) {
    console.log(`--- ${e.n}x, ${(e.ms / requests.length).toFixed(1)} ms a request: ${text}`);
    console.log(e.worst.slice(0, 4000));
  }
}

const get = (path: string) => () => fetch(`${server.url}${path}`);
try {
  const only = args.only;
  if (!only || only === "search")
    await phase(
      "/search",
      queries.map((q) => get(searchPath(q))),
    );
  if (!only || only === "recall")
    await phase(
      "/recall-index",
      queries.map(
        (q, i) => () =>
          fetch(`${server.url}/recall-index`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ prompt: q.query, session_id: `explain-${i}`, ...(q.project ? { project: q.project } : {}) }),
          }),
      ),
    );
  if (!only || only === "recent")
    await phase("/recent", [
      ...queries.slice(0, 10).map(() => get("/recent")),
      ...queries.slice(0, 10).map((q) => get(`/recent?project=${q.project ?? "atlas"}`)),
    ]);
} finally {
  await server.stop();
  await front.close();
  await db.close();
}
