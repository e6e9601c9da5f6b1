/**
 * Dashboard benchmark (`bun bench/dashboard.ts`): a store of 100k memories
 * with a year of history (tags, links, ~300k recall events, nightly runs),
 * written straight into SQLite, then GET /dashboard/data timed over real HTTP
 * against a separate server process, and dashboardData() alone in-process.
 * Prints one JSON object (also written to bench/results/). Target: < 200 ms.
 *
 * Env: BENCH_MEMORIES (default 100000), BENCH_EVENTS (default 300000),
 * BENCH_RUNS (default 20), BENCH_KEEP=1 keeps the temp home.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, pathsFor } from "../src/config";
import { dashboardData } from "../src/core/analytics";
import { benchServices } from "./lib/services";
import { openStore, setMeta } from "../src/store/sqlite";
import { FallbackEmbedder } from "../src/embed/fallback";
import { VERSION } from "../src/version";
import { prng } from "./lib/corpus";
import { ROOT, serverCommand, spawnServer } from "./lib/server";
import { round, summarize } from "./lib/stats";

const MEMORIES = Number(process.env.BENCH_MEMORIES ?? 100_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 300_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const TARGET_MS = 200;
const DAY_MS = 86_400_000;
const TYPES = ["knowledge", "experience", "decisions", "learnings"];
const TOPICS = "postgres redis kafka auth billing deploy testing frontend api infra search docs mobile ci observability security".split(" ");
const PROJECTS = "atlas billing checkout helios ledger mercury nebula orion vega zephyr".split(" ");

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** A year of history, inserted in a few big transactions (no HTTP, no embedder: only what the dashboard reads). */
function seed(dbFile: string, now: number): Record<string, number> {
  const rnd = prng(11);
  const store = openStore(dbFile);
  const db = store.sqlite;
  setMeta(store, "embedder_id", new FallbackEmbedder().id);
  const started = performance.now();
  const ids: string[] = [];
  const insertMemory = db.prepare(
    `INSERT INTO memories(id, content, memory_type, project, source_agent, created_at, updated_at, refreshed_at, strength, shown_count, used_count)
     VALUES (?, ?, ?, ?, 'bench-agent', ?, ?, ?, 1, ?, ?)`,
  );
  const insertTag = db.prepare("INSERT OR IGNORE INTO memory_tags(memory_id, tag, weight) VALUES (?, ?, ?)");
  const insertLink = db.prepare("INSERT OR IGNORE INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, 'related', 0.7, ?)");
  const insertEvent = db.prepare("INSERT INTO memory_events(memory_id, kind, at) VALUES (?, ?, ?)");
  let links = 0;
  let tags = 0;
  const created: number[] = [];
  db.transaction(() => {
    for (let i = 0; i < MEMORIES; i++) {
      const id = crypto.randomUUID();
      // Growth that speeds up over the year, as adoption grows.
      const age = Math.floor(365 * (1 - Math.sqrt(rnd())) * DAY_MS);
      const at = now - age;
      // A third have no project: their primary domain is a topic tag.
      const project = rnd() < 0.33 ? null : PROJECTS[Math.floor(rnd() * PROJECTS.length)];
      const shown = rnd() < 0.55 ? 1 + Math.floor(rnd() * 6) : 0;
      const used = shown && rnd() < 0.4 ? 1 + Math.floor(rnd() * 2) : 0;
      insertMemory.run(
        id,
        `note ${i} about ${project ?? "nothing"} and ${TOPICS[i % TOPICS.length]}`,
        TYPES[Math.floor(rnd() ** 1.5 * 4)],
        project,
        at,
        at,
        at,
        shown,
        used,
      );
      if (project) tags += insertTag.run(id, project, 1).changes;
      const extra = (project ? 0 : 1) + Math.floor(rnd() * 4);
      for (let k = 0; k < extra; k++) tags += insertTag.run(id, TOPICS[Math.floor(rnd() * TOPICS.length)], 0.8 - k * 0.1).changes;
      const k = Math.floor(rnd() * 3);
      for (let j = 0; j < k && ids.length > 0; j++) links += insertLink.run(id, ids[Math.floor(rnd() * ids.length)], at).changes;
      ids.push(id);
      created.push(at);
    }
    for (let e = 0; e < EVENTS; e++) {
      const m = Math.floor(rnd() * ids.length);
      const at = created[m] + Math.floor(rnd() * (now - created[m]));
      insertEvent.run(ids[m], rnd() < 0.8 ? "shown" : "used", at);
    }
    for (let d = 7; d >= 1; d--) {
      const day = new Date(now - d * DAY_MS).toISOString().slice(0, 10);
      const digest = {
        day,
        status: "done",
        written: d,
        merged: 2,
        dropped: 1,
        decayed: 10,
        considered: 40,
        read: 40,
        model_calls: 2,
        max_model_calls: 50,
        skipped: [],
        errors: [],
      };
      db.run("INSERT INTO nightly_runs(day, status, owner, started_at, heartbeat_at, finished_at, digest) VALUES (?, 'done', 'bench', ?, ?, ?, ?)", [
        day,
        now - d * DAY_MS,
        now - d * DAY_MS,
        now - d * DAY_MS + 60_000,
        JSON.stringify(digest),
      ]);
    }
  })();
  store.close();
  return { memories: MEMORIES, tags, links, events: EVENTS, seconds: round((performance.now() - started) / 1000) };
}

async function overHttp(home: string): Promise<Record<string, unknown>> {
  const server = await spawnServer(home, serverCommand("source"));
  try {
    const samples: number[] = [];
    let bytes = 0;
    let body: any = null;
    for (let i = 0; i < RUNS + 1; i++) {
      const t = performance.now();
      const res = await fetch(`${server.url}/dashboard/data`);
      const text = await res.text();
      const ms = performance.now() - t;
      if (res.status !== 200) throw new Error(`GET /dashboard/data answered ${res.status}: ${text.slice(0, 300)}`);
      if (i > 0) samples.push(ms); // the first request also warms the page cache
      bytes = text.length;
      body = JSON.parse(text);
    }
    return { latency_ms: summarize(samples), response_kb: round(bytes / 1024, 1), counts: body.counts, uses_per_showing: body.recall.uses_per_showing };
  } finally {
    await server.stop();
  }
}

async function inProcess(home: string): Promise<Record<string, unknown>> {
  const s = benchServices(loadConfig({ MEMSVC_HOME: home, MEMSVC_OFFLINE: "1" }), { embedder: new FallbackEmbedder(), log: () => {} });
  try {
    const time = async (days?: number) => {
      const samples: number[] = [];
      for (let i = 0; i < RUNS + 1; i++) {
        const t = performance.now();
        await dashboardData(s, { days });
        if (i > 0) samples.push(performance.now() - t);
      }
      return summarize(samples);
    };
    return { days_30_ms: await time(), days_365_ms: await time(365) };
  } finally {
    void s.close();
  }
}

async function main(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "memsvc-bench-dash-"));
  writeFileSync(join(home, "config.json"), JSON.stringify({ displayName: "Bench", planLabel: "bench" }));
  const result: Record<string, unknown> = {
    bench: "dashboard",
    version: VERSION,
    date: new Date().toISOString(),
    machine: { cpus: navigator.hardwareConcurrency, bun: Bun.version },
  };
  try {
    log(`seeding ${MEMORIES} memories and ${EVENTS} events`);
    result.seed = seed(pathsFor(home).db, Date.now());
    result.db_mb = Math.round(statSync(pathsFor(home).db).size / 1024 / 1024);
    log("timing dashboardData() in-process");
    result.core = await inProcess(home);
    log("timing GET /dashboard/data over HTTP");
    result.http = await overHttp(home);
    const http = result.http as { latency_ms: { p50: number; p95: number } };
    result.target = { ms: TARGET_MS, at: MEMORIES, met: http.latency_ms.p95 < TARGET_MS };
  } finally {
    if (process.env.BENCH_KEEP === "1") log(`kept ${home}`);
    else rmSync(home, { recursive: true, force: true });
  }
  const json = JSON.stringify(result, null, 2);
  mkdirSync(join(ROOT, "bench/results"), { recursive: true });
  writeFileSync(join(ROOT, "bench/results", `dashboard-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), `${json}\n`);
  console.log(json);
}

await main();
