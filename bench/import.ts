/**
 * `memsvc import --from markdown` at scale (issue 40): generates a Markdown
 * vault (default 100,000 notes, a folder per project: nine in ten short notes
 * with front matter, tags and a wikilink, one in ten structured with headings,
 * decision bullets and relations), then runs the real CLI into a fresh SQLite
 * home and prints JSON: items read, added/merged/skipped, wall time, items/s,
 * the child's peak RSS. `--embedder fallback` (the offline hashing embedder,
 * MEMSVC_OFFLINE=1), `tiny-onnx` (the real ONNX path with the test suite's
 * tiny model) or `both`.
 *
 *   bun bench/import.ts [--notes 100000] [--embedder fallback|tiny-onnx|both] [--keep]
 *
 * Wall-clock figures on a shared 2-core machine: state the load average beside them.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { makeTinyModel } from "../test/helpers/tiny-model";
import { generateVault } from "./lib/vault";

const { values: args } = parseArgs({ options: { notes: { type: "string" }, embedder: { type: "string" }, keep: { type: "boolean" } } });
const NOTES = Number(args.notes ?? 100_000);
const which = args.embedder ?? "fallback";
const ROOT = join(import.meta.dir, "..");

async function runImport(vault: string, embedder: "fallback" | "tiny-onnx"): Promise<Record<string, unknown>> {
  const home = mkdtempSync(join(tmpdir(), "memsvc-bench-import-"));
  if (embedder === "tiny-onnx") {
    await makeTinyModel(join(home, "models"), "test/tiny-bge");
    writeFileSync(join(home, "config.json"), JSON.stringify({ embedder: { model: "test/tiny-bge" } }));
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("MEMSVC_")) env[k] = v;
  const load = loadavg()[0];
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, "src/main.ts", "import", "--from", "markdown", vault], {
    cwd: ROOT,
    env: { ...env, MEMSVC_HOME: home, MEMSVC_OFFLINE: "1", MEMSVC_CACHE_DIR: join(home, ".cache") },
    stdout: "pipe",
    stderr: "pipe",
  });
  // CPU of each thread of the child, polled (the last reading before it exits): the main thread's is the
  // import's critical path once reading and preparing run in a worker thread beside it.
  const threads = new Map<string, { name: string; ticks: number }>();
  const poll = setInterval(() => {
    for (const tid of (() => {
      try {
        return readdirSync(`/proc/${proc.pid}/task`);
      } catch {
        return [];
      }
    })()) {
      try {
        const stat = readFileSync(`/proc/${proc.pid}/task/${tid}/stat`, "utf8");
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        threads.set(tid, { name, ticks: Number(f[11]) + Number(f[12]) });
      } catch {
        /* the thread ended */
      }
    }
  }, 200);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearInterval(poll);
  const hz = 100;
  const mainCpu = (threads.get(String(proc.pid))?.ticks ?? 0) / hz;
  const busiest = [...threads.values()]
    .sort((a, b) => b.ticks - a.ticks)
    .slice(0, 4)
    .map((t) => `${t.name} ${t.ticks / hz} s`);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`import failed (${code}): ${stderr.slice(-2000)}`);
  const m = /imported (\d+) items from (\d+) sources? into .*: (\d+) added, (\d+) merged, (\d+) skipped \(already there\), (\d+) links?/.exec(stdout);
  if (!m) throw new Error(`unexpected output: ${stdout}`);
  const [items, sources, added, merged, skipped, links] = m.slice(1).map(Number);
  const usage = proc.resourceUsage();
  if (!args.keep) rmSync(home, { recursive: true, force: true });
  return {
    embedder: embedder === "fallback" ? "fallback:hash-v1 (MEMSVC_OFFLINE=1)" : "onnx (test/tiny-bge, the suite's generated model)",
    notes: sources,
    items,
    added,
    merged,
    skipped,
    named_links: links,
    seconds: Math.round(seconds * 10) / 10,
    items_per_s: Math.round(items / seconds),
    // CPU time of the import process (user + system): steadier than wall time on a shared machine.
    cpu_s: usage ? Math.round((Number(usage.cpuTime.user) + Number(usage.cpuTime.system)) / 1e5) / 10 : null,
    items_per_cpu_s: usage ? Math.round(items / ((Number(usage.cpuTime.user) + Number(usage.cpuTime.system)) / 1e6)) : null,
    // Main thread CPU (from /proc, polled): with the worker, items / this bounds items/s on an idle 2-core machine.
    main_thread_cpu_s: Math.round(mainCpu * 10) / 10,
    items_per_main_thread_cpu_s: mainCpu > 0 ? Math.round(items / mainCpu) : null,
    busiest_threads: busiest,
    // Bun reports maxRSS in bytes on Linux.
    peak_rss_mb: usage ? Math.round(Number(usage.maxRSS) / 1024 / 1024) : null,
    load_avg_1m_before: Math.round(load * 100) / 100,
    ...(args.keep ? { home } : {}),
  };
}

const vault = mkdtempSync(join(tmpdir(), "memsvc-bench-vault-"));
const gen = generateVault(vault, NOTES);
const runs: Record<string, unknown>[] = [];
try {
  for (const e of which === "both" ? (["fallback", "tiny-onnx"] as const) : [which as "fallback" | "tiny-onnx"]) runs.push(await runImport(vault, e));
} finally {
  if (!args.keep) rmSync(vault, { recursive: true, force: true });
}
console.log(
  JSON.stringify(
    {
      bench: "import --from markdown",
      storage: "sqlite",
      vault: { notes: NOTES, short: gen.short, structured: gen.structured, generated_s: Math.round(gen.seconds * 10) / 10 },
      runs,
    },
    null,
    2,
  ),
);
