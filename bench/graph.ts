/**
 * Graph export benchmark (`bun bench/graph.ts`): 10,000 memories with domain
 * tags, random unit vectors and ~3 links each, written straight into SQLite;
 * then GET /graph?op=export&limit=10000 timed over real HTTP against a
 * separate server process (plus the 5000 default and a filtered slice), and
 * exportGraph() alone in-process. Prints one JSON object (also written to
 * bench/results/). Target: well under 1 s for 10,000 nodes.
 *
 * Env: BENCH_MEMORIES (default 10000), BENCH_LINKS_PER (default 3),
 * BENCH_RUNS (default 20), BENCH_KEEP=1 keeps the temp home.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, pathsFor } from "../src/config";
import { exportGraph } from "../src/core/graph";
import { hubs, neighbors, path } from "../src/core/graph";
import { benchServices, sqliteOf } from "./lib/services";
import { openStore, setMeta } from "../src/store/sqlite";
import { FallbackEmbedder } from "../src/embed/fallback";
import { VERSION } from "../src/version";
import { prng } from "./lib/corpus";
import { ROOT, serverCommand, spawnServer } from "./lib/server";
import { round, summarize } from "./lib/stats";

const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 10_000);
const LINKS_PER = Number(process.env.BENCH_LINKS_PER ?? 3);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const TARGET_MS = 1000;
const DAY_MS = 86_400_000;
const TYPES = ["knowledge", "experience", "decisions", "learnings"];
const TOPICS = "postgres redis kafka auth billing deploy testing frontend api infra search docs mobile ci observability security".split(" ");
const PROJECTS = "atlas billing checkout helios ledger mercury nebula orion vega zephyr".split(" ");
const RELATIONSHIPS = ["related", "related", "related", "caused_by", "supersedes", "fixes", "depends_on"];

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

function seed(dbFile: string, now: number): Record<string, number> {
  const rnd = prng(7);
  const store = openStore(dbFile);
  const db = store.sqlite;
  setMeta(store, "embedder_id", new FallbackEmbedder().id);
  const started = performance.now();
  const insertMemory = db.prepare(
    `INSERT INTO memories(id, content, memory_type, project, source_agent, created_at, updated_at, refreshed_at, strength)
     VALUES (?, ?, ?, ?, 'bench-agent', ?, ?, ?, ?) RETURNING seq`,
  );
  const insertVec = db.prepare("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)");
  const insertTag = db.prepare("INSERT OR IGNORE INTO memory_tags(memory_id, tag, weight) VALUES (?, ?, ?)");
  const insertLink = db.prepare("INSERT OR IGNORE INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, ?, ?, ?)");
  const ids: string[] = [];
  let links = 0;
  db.transaction(() => {
    for (let i = 0; i < MEMORIES; i++) {
      const id = crypto.randomUUID();
      const at = now - Math.floor(rnd() * 180 * DAY_MS);
      const project = rnd() < 0.3 ? null : PROJECTS[Math.floor(rnd() * PROJECTS.length)];
      const topic = TOPICS[Math.floor(rnd() * TOPICS.length)];
      // Distilled memories are a few sentences: 120 to 600 characters.
      const content = `Note ${i} on ${topic} for ${project ?? "no project"}: ${"the deploy needed a config change before the migration ran cleanly. ".repeat(1 + Math.floor(rnd() * 8))}`;
      const { seq } = insertMemory.get(id, content, TYPES[Math.floor(rnd() * 4)], project, at, at, at, 0.5 + rnd() * 3) as { seq: number };
      const v = new Float32Array(384);
      let norm = 0;
      for (let d = 0; d < 384; d++) norm += (v[d] = rnd() * 2 - 1) ** 2;
      for (let d = 0; d < 384; d++) v[d] /= Math.sqrt(norm);
      insertVec.run(BigInt(seq), v);
      if (project) insertTag.run(id, project, 1);
      insertTag.run(id, topic, 0.8);
      if (rnd() < 0.5) insertTag.run(id, TOPICS[Math.floor(rnd() * TOPICS.length)], 0.7);
      for (let k = 0; k < LINKS_PER && ids.length > 0; k++) {
        // Preferential attachment-ish: recent memories and a few hubs.
        const j = rnd() < 0.2 ? Math.floor(rnd() * Math.min(ids.length, 50)) : Math.floor(rnd() * ids.length);
        links += insertLink.run(id, ids[j], RELATIONSHIPS[Math.floor(rnd() * RELATIONSHIPS.length)], round(0.45 + rnd() * 0.5, 3), at).changes;
      }
      ids.push(id);
    }
  })();
  db.run("ANALYZE");
  store.close();
  return { memories: MEMORIES, links, seconds: round((performance.now() - started) / 1000) };
}

async function timeGet(url: string): Promise<{ latency_ms: ReturnType<typeof summarize>; response_kb: number; nodes: number; edges: number }> {
  const samples: number[] = [];
  let bytes = 0;
  let body: any = null;
  for (let i = 0; i < RUNS + 1; i++) {
    const t = performance.now();
    const res = await fetch(url);
    const buf = await res.arrayBuffer();
    const ms = performance.now() - t;
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${new TextDecoder().decode(buf).slice(0, 300)}`);
    if (i > 0) samples.push(ms); // the first request warms the page cache and the JIT
    bytes = buf.byteLength;
    if (i === 0) body = JSON.parse(new TextDecoder().decode(buf));
  }
  return { latency_ms: summarize(samples), response_kb: round(bytes / 1024, 1), nodes: body.nodes.length, edges: body.edges.length };
}

async function overHttp(home: string): Promise<Record<string, unknown>> {
  const server = await spawnServer(home, serverCommand("source"));
  try {
    return {
      export_10000: await timeGet(`${server.url}/graph?op=export&limit=10000`),
      export_default_5000: await timeGet(`${server.url}/graph?op=export`),
      export_domain_filtered: await timeGet(`${server.url}/graph?op=export&domain=atlas&minStrength=0.5`),
    };
  } finally {
    await server.stop();
  }
}

async function inProcess(home: string): Promise<Record<string, unknown>> {
  const s = benchServices(loadConfig({ MEMSVC_HOME: home, MEMSVC_OFFLINE: "1" }), { embedder: new FallbackEmbedder(), log: () => {} });
  try {
    const time = async (fn: () => unknown) => {
      const samples: number[] = [];
      for (let i = 0; i < RUNS + 1; i++) {
        const t = performance.now();
        await fn();
        if (i > 0) samples.push(performance.now() - t);
      }
      return summarize(samples);
    };
    const ids = sqliteOf(s)
      .sqlite.query<{ id: string }, []>("SELECT id FROM memories ORDER BY seq")
      .all()
      .map((r) => r.id);
    const hub = (await hubs(s, { limit: 1 })).hubs[0].id;
    return {
      exportGraph_10000_ms: await time(() => exportGraph(s, { limit: 10_000 })),
      exportGraph_10000_with_json_ms: await time(async () => JSON.stringify(await exportGraph(s, { limit: 10_000 }))),
      neighbors_of_top_hub_ms: await time(() => neighbors(s, { id: hub, limit: 100 })),
      hubs_ms: await time(() => hubs(s, { limit: 10 })),
      path_first_to_last_ms: await time(() => path(s, { id: ids[0], target_id: ids[ids.length - 1] })),
    };
  } finally {
    void s.close();
  }
}

async function main(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "memsvc-bench-graph-"));
  writeFileSync(join(home, "config.json"), "{}");
  const result: Record<string, unknown> = {
    bench: "graph",
    version: VERSION,
    date: new Date().toISOString(),
    machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version },
  };
  try {
    log(`seeding ${MEMORIES} memories with ~${LINKS_PER} links each`);
    result.seed = seed(pathsFor(home).db, Date.now());
    result.db_mb = Math.round(statSync(pathsFor(home).db).size / 1024 / 1024);
    log("timing graph operations in-process");
    result.core = await inProcess(home);
    log("timing GET /graph?op=export over HTTP");
    result.http = await overHttp(home);
    const http = result.http as { export_10000: { latency_ms: { p95: number } } };
    result.target = { ms: TARGET_MS, nodes: MEMORIES, met: http.export_10000.latency_ms.p95 < TARGET_MS };
  } finally {
    if (process.env.BENCH_KEEP === "1") log(`kept ${home}`);
    else rmSync(home, { recursive: true, force: true });
  }
  const json = JSON.stringify(result, null, 2);
  mkdirSync(join(ROOT, "bench/results"), { recursive: true });
  writeFileSync(join(ROOT, "bench/results", `graph-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), `${json}\n`);
  console.log(json);
}

await main();
