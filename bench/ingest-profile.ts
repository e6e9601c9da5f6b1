/**
 * Where an ingest's CPU goes as the store grows (issue 13): seeds a real
 * SQLite home with the bench corpus (bench/lib/seed.ts) to each size, opens it
 * as the server does, and ingests through ingestMemory (the function behind
 * POST /ingest), one memory at a time, timing its phases in-process.
 *
 *   bun bench/ingest-profile.ts [--sizes 0,50000,100000] [--count 2000] [--keep 1]
 *   bun bench/ingest-profile.ts --home <kept home> [--count 2000]
 *
 * Phases are timed by wrapping the storage calls ingest makes (the
 * transaction's own store object, reached through storage.transaction); redact
 * is timed on the same contents in a separate loop (it is a module function).
 * Everything is process CPU time (process.cpuUsage) in ms per memory; the
 * wall clock is reported too but is noisy on a shared machine. State the load average next to any figure.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { ingestMemory } from "../src/core/ingest";
import { requireContent } from "../src/core/memories/memories";
import { redact } from "../src/core/secrets";
import { benchServices } from "./lib/services";
import { FallbackEmbedder } from "../src/embed";
import { NoteGenerator } from "./lib/corpus";
import { seedStore } from "./lib/seed";

const { values: args } = parseArgs({ options: { sizes: { type: "string" }, count: { type: "string" }, keep: { type: "string" }, home: { type: "string" } } });
const sizes = (args.sizes ?? "0,50000,100000").split(",").map(Number);
const COUNT = Number(args.count ?? 2000);
const WARM = 200;

type Phase = "embed" | "session" | "insert" | "nearest" | "links" | "tx_other" | "commit";
/** Process CPU time in ms: phases are timed in CPU, not wall clock (the machine is shared). */
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

async function profileAt(home: string, gen: NoteGenerator): Promise<Record<string, unknown>> {
  const config = loadConfig({ MEMSVC_HOME: home, MEMSVC_OFFLINE: "1" });
  const embedder = new FallbackEmbedder();
  const times: Record<Phase, number> = { embed: 0, session: 0, insert: 0, nearest: 0, links: 0, tx_other: 0, commit: 0 };
  const timedEmbedder = Object.create(embedder, {
    embed: {
      value: async (texts: string[], kind: "document" | "query") => {
        const t = cpuNow();
        const out = await embedder.embed(texts, kind);
        times.embed += cpuNow() - t;
        return out;
      },
    },
  });
  const s = benchServices(config, { embedder: timedEmbedder, log: silentLogger });
  await s.indexState.ready;
  const size = s.index.size;
  // The transaction's own store object: the one ingest's writes go through.
  const tx = await s.storage.transaction(async (t) => t);
  const wrap = <T extends object>(obj: T, name: keyof T & string, phase: Phase) => {
    const fn = (obj[name] as (...a: unknown[]) => Promise<unknown>).bind(obj);
    (obj as Record<string, unknown>)[name] = async (...a: unknown[]) => {
      const t = cpuNow();
      try {
        return await fn(...a);
      } finally {
        times[phase] += cpuNow() - t;
      }
    };
  };
  wrap(s.storage.memories, "countSession", "session");
  wrap(tx.memories, "claimSession", "session");
  wrap(tx.memories, "insertMemories", "insert");
  wrap(tx.search, "nearest", "nearest");
  wrap(tx.graph, "linkToNearest", "links");
  // The whole transaction (BEGIN ... COMMIT) minus the phases inside it is the commit and group machinery.
  let txTotal = 0;
  const transaction = s.storage.transaction.bind(s.storage);
  s.storage.transaction = async (fn) => {
    const t = cpuNow();
    try {
      return await transaction(fn);
    } finally {
      txTotal += cpuNow() - t;
    }
  };
  const notes = Array.from({ length: WARM + COUNT }, () => gen.note());
  for (const n of notes.slice(0, WARM))
    await ingestMemory(s, { content: n.content, project: n.project, memory_type: n.memoryType, source_agent: "bench-agent" });
  for (const k of Object.keys(times) as Phase[]) times[k] = 0;
  txTotal = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (const n of notes.slice(WARM)) await ingestMemory(s, { content: n.content, project: n.project, memory_type: n.memoryType, source_agent: "bench-agent" });
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  times.commit = txTotal - times.session - times.insert - times.nearest - times.links;
  // Redact (validation + secret scan) on the same contents, alone.
  const r0 = cpuNow();
  for (const n of notes.slice(WARM)) await redact(requireContent(n.content));
  const redactMs = cpuNow() - r0;
  const phases = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, round(v / COUNT)]));
  const accounted = Object.values(times).reduce((a, b) => a + b, 0) + redactMs;
  const walls = wall / COUNT;
  const out = {
    store_size: size,
    memories: COUNT,
    cpu_ms_per_memory: round((cpu.user + cpu.system) / 1000 / COUNT),
    wall_ms_per_memory: round(walls),
    phases_ms_per_memory: { redact: round(redactMs / COUNT), ...phases, unaccounted: round((cpu.user + cpu.system) / 1000 / COUNT - accounted / COUNT) },
    load_average: loadavg().map((x) => round(x, 2)),
  };
  await s.close();
  return out;
}

async function main(): Promise<void> {
  // --home: profile an existing home as it is (no seeding, kept afterwards).
  if (args.home) {
    const r = await profileAt(args.home, new NoteGenerator(Date.now() % 1000));
    console.log(JSON.stringify({ bench: "ingest-profile", date: new Date().toISOString(), results: [r] }, null, 2));
    return;
  }
  const home = mkdtempSync(join(tmpdir(), "memsvc-ingest-profile-"));
  const seedGen = new NoteGenerator(1234);
  const gen = new NoteGenerator(99);
  const results: unknown[] = [];
  try {
    const config = loadConfig({ MEMSVC_HOME: home, MEMSVC_OFFLINE: "1" });
    // Open once so the home and schema exist before seeding.
    await benchServices(config, { embedder: new FallbackEmbedder(), log: silentLogger }).close();
    let seeded = 0;
    for (const target of sizes) {
      const have = seeded + results.length * (WARM + COUNT);
      if (target > have) {
        seedStore(config.paths.db, seedGen, target - have);
        seeded += target - have;
      }
      const r = await profileAt(home, gen);
      console.error(JSON.stringify(r));
      results.push(r);
    }
  } finally {
    if (!args.keep) rmSync(home, { recursive: true, force: true });
    else console.error(`kept ${home}`);
  }
  console.log(JSON.stringify({ bench: "ingest-profile", date: new Date().toISOString(), results }, null, 2));
}

await main();
