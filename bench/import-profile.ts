/**
 * Where `memsvc import --from markdown`'s CPU goes (issue 40): generates the
 * bench vault (bench/lib/vault.ts), reads it with the real reader and runs
 * importItems in-process into a fresh SQLite home with the offline hashing
 * embedder, timing each phase by wrapping the storage, embedder and index
 * calls the import makes (the transaction's own store object included; a
 * batch's transaction and the named links' apart), and the preparing
 * (redaction, exact repeats) that a worker thread does in the CLI.
 * Prints JSON: process CPU ms per phase and per item, wall time, peak RSS.
 *
 *   bun bench/import-profile.ts [--notes 20000] [--keep] [--cache-mb 64]
 *
 * --cache-mb sets the store connection's page cache (an experiment; the import leaves it as opened).
 *
 * CPU time, not wall clock (the machine is shared); state the load average beside figures.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/core/log";
import { importPrepared, prepareStream, readSource, storedHashes } from "../src/core/import";
import type { PreparedChunk, ReadResult } from "../src/core/import";
import type { Storage } from "../src/core/storage";
import { FallbackEmbedder } from "../src/embed";
import { benchServices } from "./lib/services";
import { generateVault } from "./lib/vault";

const { values: args } = parseArgs({ options: { notes: { type: "string" }, keep: { type: "boolean" }, "cache-mb": { type: "string" } } });
const NOTES = Number(args.notes ?? 20_000);
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const times = new Map<string, { ms: number; calls: number }>();
const add = (name: string, ms: number) => {
  const t = times.get(name) ?? { ms: 0, calls: 0 };
  t.ms += ms;
  t.calls++;
  times.set(name, t);
};
async function timed<T>(name: string, fn: () => T | Promise<T>): Promise<T> {
  const t = cpuNow();
  try {
    return await fn();
  } finally {
    add(name, cpuNow() - t);
  }
}
/** A copy of each capability store whose methods are timed under `prefix.capability.method`. */
function timedStorage(st: Storage, prefix: string): Storage {
  const out: Record<string, unknown> = Object.create(st);
  for (const cap of ["memories", "search", "graph", "distill"] as const) {
    const store = st[cap] as unknown as Record<string, unknown>;
    const copy: Record<string, unknown> = Object.create(store);
    for (const key of Object.keys(store)) {
      const f = store[key];
      if (typeof f === "function") copy[key] = (...a: unknown[]) => timed(`${prefix}.${cap}.${key}`, () => (f as (...x: unknown[]) => unknown).apply(store, a));
    }
    out[cap] = copy;
  }
  return out as unknown as Storage;
}

const vault = mkdtempSync(join(tmpdir(), "memsvc-prof-vault-"));
const home = mkdtempSync(join(tmpdir(), "memsvc-prof-home-"));
try {
  const gen = generateVault(vault, NOTES);
  const load = loadavg()[0];
  const wall0 = performance.now();
  const cpu0 = cpuNow();
  const read = await timed("read", () => readSource("markdown", vault, { now: Date.now() }));
  const config = loadConfig({ MEMSVC_HOME: home, MEMSVC_OFFLINE: "1" });
  const embedder = new FallbackEmbedder();
  const timedEmbedder = Object.create(embedder, {
    embed: { value: (texts: string[], kind: "document" | "query") => timed("embed", () => embedder.embed(texts, kind)) },
  });
  const s = benchServices(config, { embedder: timedEmbedder, log: silentLogger });
  await s.indexState.ready;
  if (args["cache-mb"]) s.sqlite!.sqlite.run(`PRAGMA cache_size = -${Number(args["cache-mb"]) * 1024}`);
  const storage = s.storage;
  const outer = timedStorage(storage, "out");
  // A batch's transaction (it inserts memories) and the named links' (it does not) are timed apart.
  const tx = (fn: (t: Storage) => Promise<unknown>) => {
    const t0 = cpuNow();
    let kind = "links";
    return storage
      .transaction(async (t) => {
        const inner = cpuNow();
        const view = timedStorage(t, "tx");
        const insert = view.memories.insertMemories;
        (view as { memories: Storage["memories"] }).memories = Object.assign(Object.create(view.memories), {
          insertMemories: (...a: Parameters<typeof insert>) => ((kind = "batch"), insert(...a)),
        });
        try {
          return await fn(view);
        } finally {
          add(`tx.${kind}.body`, cpuNow() - inner);
        }
      })
      .finally(() => add(`tx.${kind}.total`, cpuNow() - t0));
  };
  const view = Object.create(s, { storage: { value: Object.assign(Object.create(outer), { transaction: tx }) } });
  const index = s.index as unknown as Record<string, unknown>;
  for (const key of ["upsert", "upsertMany", "load", "rebuild"]) {
    const f = index[key];
    if (typeof f === "function")
      index[key] = (...a: unknown[]) => {
        const t = cpuNow();
        try {
          return (f as (...x: unknown[]) => unknown).apply(s.index, a);
        } finally {
          add(`index.${key}`, cpuNow() - t);
        }
      };
  }
  // Memory as the import goes (every ~10% of it): where the peak RSS comes from.
  const memory: Record<string, number>[] = [];
  const sample = (done: number) => {
    const m = process.memoryUsage();
    memory.push({ done, rss_mb: Math.round(m.rss / 1e6), heap_mb: Math.round(m.heapUsed / 1e6), external_mb: Math.round(m.external / 1e6) });
  };
  sample(0);
  let next = 0;
  const progress = (done: number, total: number) => {
    if (done >= next) sample(done), (next = done + Math.ceil(total / 10));
  };
  // importItems' steps, each timed: exact-repeat keys, preparing (redaction, repeats), the write path.
  const existing = await timed("storedHashes", () => storedHashes((after, limit) => storage.memories.reembedRows(after, limit)));
  const one = (async function* (): AsyncGenerator<ReadResult> {
    yield read;
  })();
  const prepared = prepareStream(one, existing);
  const timedChunks: AsyncIterable<PreparedChunk> = {
    [Symbol.asyncIterator]: () => ({ next: () => timed("prepare", () => prepared.next()) }),
  };
  const out = await timed("importPrepared", () => importPrepared(view, timedChunks, { progress }));
  sample(-1);
  const cpu = cpuNow() - cpu0;
  const wall = (performance.now() - wall0) / 1000;
  const items = read.items.length;
  const phases = Object.fromEntries(
    [...times.entries()]
      .sort((a, b) => b[1].ms - a[1].ms)
      .map(([k, v]) => [k, { cpu_s: Math.round(v.ms / 100) / 10, ms_per_item: Math.round((v.ms / items) * 1000) / 1000, calls: v.calls }]),
  );
  await s.close();
  console.log(
    JSON.stringify(
      {
        bench: "import-profile",
        notes: NOTES,
        vault: gen,
        items,
        added: out.added,
        merged: out.merged,
        skipped: out.skipped,
        links: out.links,
        wall_s: Math.round(wall * 10) / 10,
        cpu_s: Math.round(cpu / 100) / 10,
        items_per_s: Math.round(items / wall),
        items_per_cpu_s: Math.round(items / (cpu / 1000)),
        peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
        load_avg_1m_before: Math.round(load * 100) / 100,
        phases,
        memory,
      },
      null,
      2,
    ),
  );
} finally {
  if (!args.keep) {
    rmSync(vault, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}
