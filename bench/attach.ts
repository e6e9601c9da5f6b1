/**
 * The HTTP bench's request figures against servers that are already running
 * (a store kept by `BENCH_KEEP=1 bun run bench`, or a server over a real
 * PostgreSQL), with fewer queries when a full run takes too long:
 *   bun bench/attach.ts --server sqlite=http://127.0.0.1:PORT@PID --server postgres=http://...@PID
 *     [--sql sqlite=/path/memsvc.db] [--sql postgres=postgres://...#schema] [--queries 60] [--ingest 50]
 * Per server, in turn: /search (with and without a project), /recall-index,
 * /recent, /search with 1 and 4 clients in flight, ingest of new memories
 * (one client), server RSS and CPU per request (the pid must be local); per
 * --sql, the same plain SQL straight to that database. Prints one JSON object
 * (also written to bench/results/).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { NoteGenerator } from "./lib/corpus";
import { timeConcurrentSearch, timeIngest, timeRecallIndex, timeRecent, timeReferenceQueries, timeSearch } from "./lib/http-run";
import { memoryOf, ROOT, type RunningServer } from "./lib/server";
import { round } from "./lib/stats";

const { values: args } = parseArgs({
  options: { server: { type: "string", multiple: true }, sql: { type: "string", multiple: true }, queries: { type: "string" }, ingest: { type: "string" } },
});
const QUERIES = Number(args.queries ?? 60);
const INGEST = Number(args.ingest ?? 50);
const log = (line: string) => process.stderr.write(`[attach] ${line}\n`);

const queryGen = new NoteGenerator(7);
const queries = Array.from({ length: QUERIES }, () => queryGen.query());
const result: Record<string, unknown> = {
  bench: "attach",
  date: new Date().toISOString(),
  queries: QUERIES,
  ingest: INGEST,
  load_average_at_start: loadavg().map((x) => round(x)),
};

for (const spec of args.server ?? []) {
  const m = /^(\w+)=(https?:\/\/[^@]+)@(\d+)$/.exec(spec);
  if (!m) throw new Error(`--server name=url@pid, not ${spec}`);
  const [, name, url, pid] = m;
  const server = { url, pid: Number(pid), startMs: 0, stop: async () => {} } satisfies RunningServer;
  log(`${name}: /search, /recent, /recall-index, 1 and 4 clients, ingest`);
  const load = loadavg().map((x) => round(x));
  const health = (await (await fetch(`${url}/health`)).json()) as { memories?: number };
  const figures: Record<string, unknown> = { memories: health.memories, load_average_before: load };
  Object.assign(figures, await timeSearch(server, queries));
  Object.assign(figures, await timeRecent(server, queries));
  figures.recall_index = await timeRecallIndex(server, queries);
  figures.concurrent_search = [await timeConcurrentSearch(server, queries, 1), await timeConcurrentSearch(server, queries, 4)];
  if (INGEST > 0) figures.ingest = await timeIngest(server, new NoteGenerator(4242), INGEST);
  figures.memory = memoryOf(server.pid);
  figures.load_average_after = loadavg().map((x) => round(x));
  result[name] = figures;
  log(`${name}: ${JSON.stringify(figures)}`);
}

for (const spec of args.sql ?? []) {
  const m = /^(\w+)=(.+)$/.exec(spec);
  if (!m) throw new Error(`--sql name=sqlite-file or name=postgres-url#schema, not ${spec}`);
  const [, name, where] = m;
  const figures = where.startsWith("postgres")
    ? await timeReferenceQueries(
        { engine: "postgres", home: "", cmd: { kind: "source", argv: [] }, pg: { url: where.split("#")[0], schema: where.split("#")[1] } },
        "",
      )
    : await timeReferenceQueries({ engine: "sqlite", home: "", cmd: { kind: "source", argv: [] } }, where);
  result[`${name}_reference_sql_ms`] = figures;
  log(`${name} reference SQL: ${JSON.stringify(figures)}`);
}

result.load_average_at_end = loadavg().map((x) => round(x));
const json = JSON.stringify(result, null, 2);
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
writeFileSync(join(ROOT, "bench/results", `attach-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), `${json}\n`);
console.log(json);
