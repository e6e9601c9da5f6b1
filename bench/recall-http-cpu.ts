/**
 * Server CPU per POST /recall-index over HTTP (`bun bench/recall-http-cpu.ts
 * --root <checkout> [--requests 1500]`): that checkout's server on a copy of
 * the store bench/recall-cpu.ts seeded for it (run that first), one client,
 * a new session per prompt as bench/lib/http-run.ts does, CPU from
 * /proc/<pid>/stat (10 ms ticks: many requests make the figure hold). The
 * HTTP twin of recall-cpu.ts, for when the in-process figure and
 * bench:compare disagree. Prints one JSON line.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { NoteGenerator } from "./lib/corpus";
import { cpuMsOf, serverCommandAt, spawnServer } from "./lib/server";
import { indexReady } from "./lib/http-run";

const { values: args } = parseArgs({ options: { root: { type: "string" }, requests: { type: "string" }, size: { type: "string" } } });
const ROOT = resolve(args.root ?? join(import.meta.dir, ".."));
const REQUESTS = Number(args.requests ?? 1500);
const SIZE = Number(args.size ?? 10_000);
const seeded = join(tmpdir(), `memsvc-recall-cpu-${Bun.hash(ROOT).toString(16)}-${SIZE}`);
if (!existsSync(join(seeded, "done"))) throw new Error(`no seeded store for ${ROOT}: run bench/recall-cpu.ts --root ${ROOT} first`);

const home = mkdtempSync(join(tmpdir(), "memsvc-recall-http-"));
try {
  mkdirSync(home, { recursive: true });
  copyFileSync(join(seeded, "memsvc.db"), join(home, "memsvc.db"));
  const server = await spawnServer(home, serverCommandAt(ROOT));
  try {
    await indexReady(server.url, server.startMs);
    const gen = new NoteGenerator(7);
    const prompts = Array.from({ length: 300 }, () => gen.query());
    let n = 0;
    const post = async (i: number) => {
      const q = prompts[i % prompts.length];
      const res = await fetch(`${server.url}/recall-index`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ session_id: `h-${n++}`, prompt: q.query, ...(q.project ? { project: q.project } : {}) }),
      });
      if (res.status !== 200) throw new Error(`POST /recall-index: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { block?: string | null }).block ? 1 : 0;
    };
    for (let i = 0; i < 200; i++) await post(i);
    const c0 = cpuMsOf(server.pid);
    const t0 = performance.now();
    let blocks = 0;
    for (let i = 0; i < REQUESTS; i++) blocks += await post(i);
    const cpu = (cpuMsOf(server.pid) - c0) / REQUESTS;
    console.log(
      JSON.stringify({
        root: ROOT,
        requests: REQUESTS,
        server_cpu_ms_per_request: Math.round(cpu * 1000) / 1000,
        wall_ms_per_request: Math.round(((performance.now() - t0) / REQUESTS) * 1000) / 1000,
        blocks,
        load_average: loadavg().map((x) => Math.round(x * 100) / 100),
      }),
    );
  } finally {
    await server.stop();
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
