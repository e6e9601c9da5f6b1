/**
 * The PostgreSQL the HTTP bench measures: a real server. BENCH_PG_URL names
 * one (a role that may create schemas and, once, the vector extension); else
 * the bench starts a throw-away PostgreSQL 15 with pgvector through
 * ../shared/scripts/postgres-pgvector.sh (Debian's server, pgvector built from
 * the vendored tarball; needs root and apt the first time). BENCH_PG=pglite
 * measures PGlite instead (the figures before issue 36; one WebAssembly backend).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { ROOT, sumOverTree } from "./server";

export interface BenchDatabase {
  url: string;
  /** The postmaster (real server) or the PGlite process. */
  pid: number;
  kind: "postgres" | "pglite";
  /** What the database is and how it runs, for the result's `database`. */
  describe: string;
  /** The server settings that matter to the figures (real server only). */
  settings?: Record<string, string>;
  /** RSS of the database: the postmaster and every backend it forked (real server), in MB. */
  memoryMb(): { rss_mb: number; processes: number };
  stop(): void;
}

const SCRIPT = join(ROOT, "..", "shared", "scripts", "postgres-pgvector.sh");
const SETTINGS = [
  "server_version",
  "shared_buffers",
  "work_mem",
  "maintenance_work_mem",
  "effective_cache_size",
  "max_connections",
  "max_parallel_workers_per_gather",
  "max_parallel_maintenance_workers",
  "random_page_cost",
  "jit",
  "synchronous_commit",
  "fsync",
];

function rssOfTree(root: number): { rss_mb: number; processes: number } {
  const { total, processes } = sumOverTree(root, (pid) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0));
  return { rss_mb: Math.round(total / 1024), processes };
}

async function describeServer(url: string): Promise<{ pid: number; settings: Record<string, string> }> {
  const sql = new SQL({ url, max: 1, prepare: false });
  try {
    const rows = (await sql.unsafe(`SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)`, [SETTINGS])) as {
      name: string;
      setting: string;
      unit: string | null;
    }[];
    const settings = Object.fromEntries(rows.map((r) => [r.name, r.unit ? `${r.setting} ${r.unit}` : r.setting]));
    const [{ v }] = await sql.unsafe("SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'");
    settings.pgvector = v;
    let pid = 0;
    try {
      const [{ dir }] = await sql.unsafe("SELECT current_setting('data_directory') AS dir");
      pid = Number(readFileSync(join(dir, "postmaster.pid"), "utf8").split("\n")[0]);
    } catch {
      /* not a superuser, or another machine: no memory figures */
    }
    return { pid, settings };
  } finally {
    await sql.close();
  }
}

export async function startBenchDatabase(log: (line: string) => void): Promise<BenchDatabase> {
  if (process.env.BENCH_PG === "pglite") {
    const { startPglite } = await import("../../test/helpers/pglite");
    const { memoryOf } = await import("./server");
    const p = await startPglite();
    return {
      url: p.url,
      pid: p.pid,
      kind: "pglite",
      describe: "PGlite (PostgreSQL in WebAssembly with pgvector, one process, one backend) over TCP, data in memory",
      memoryMb: () => ({ rss_mb: memoryOf(p.pid).rss_mb, processes: 1 }),
      stop: p.stop,
    };
  }
  let url = process.env.BENCH_PG_URL;
  let stop = () => {};
  if (!url) {
    if (!existsSync(SCRIPT))
      throw new Error(`--engine postgres needs a real PostgreSQL: set BENCH_PG_URL, or run where ${SCRIPT} can start one (BENCH_PG=pglite for PGlite)`);
    const dir = mkdtempSync(join(tmpdir(), "memsvc-bench-pgdata-"));
    log(`starting PostgreSQL 15 + pgvector in ${dir} (${SCRIPT})`);
    const r = Bun.spawnSync(["bash", SCRIPT, "start", join(dir, "data")], { stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`${SCRIPT} start failed: ${r.stderr.toString().slice(-2000)}`);
    url = r.stdout.toString().trim().split("\n").pop()!;
    stop = () => {
      Bun.spawnSync(["bash", SCRIPT, "stop", join(dir, "data")]);
      rmSync(dir, { recursive: true, force: true });
    };
    process.once("exit", stop);
  }
  const { pid, settings } = await describeServer(url);
  return {
    url,
    pid,
    kind: "postgres",
    describe: `PostgreSQL ${settings.server_version} with pgvector ${settings.pgvector} on 127.0.0.1 (${process.env.BENCH_PG_URL ? "BENCH_PG_URL" : "a throw-away cluster of ../shared/scripts/postgres-pgvector.sh"}), a backend process per connection`,
    settings,
    memoryMb: () => (pid ? rssOfTree(pid) : { rss_mb: 0, processes: 0 }),
    stop,
  };
}
