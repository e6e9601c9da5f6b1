import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "../..");
const BINARY = join(ROOT, "dist/memsvc");

export interface ServerCommand {
  /** "binary" (dist/memsvc) or "source" (bun src/main.ts). */
  kind: "binary" | "source";
  argv: string[];
  /** The checkout the server runs from (its working directory); ROOT unless said. */
  root?: string;
}

/** dist/memsvc when it was built, otherwise the sources through the running Bun. */
export function serverCommand(prefer: "binary" | "source" = "binary"): ServerCommand {
  if (prefer === "binary" && existsSync(BINARY)) return { kind: "binary", argv: [BINARY, "server"] };
  return serverCommandAt(ROOT);
}

/** Newest modification time among what the binary is built from (src/, assets/, build.ts and the package files). */
function newestSourceMs(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const dir of ["src", "assets"]) if (existsSync(join(ROOT, dir))) walk(join(ROOT, dir));
  for (const f of ["build.ts", "package.json", "bun.lock"]) if (existsSync(join(ROOT, f))) newest = Math.max(newest, statSync(join(ROOT, f)).mtimeMs);
  return newest;
}

/**
 * dist/memsvc, what users run, built first when missing or older than any of
 * its sources (so the figures are this checkout's, never a stale build's); the
 * sources through the running Bun when the build fails. A server run from
 * source spends ~200 ms more before its first answer loading and transpiling
 * its modules (100k store, first start: 262-283 ms from source, 82-83 ms
 * from the binary, measured).
 */
export function freshBinaryCommand(log: (line: string) => void): ServerCommand {
  if (!existsSync(BINARY) || newestSourceMs() > statSync(BINARY).mtimeMs) {
    log("building dist/memsvc: the sources are newer than the binary");
    const built = Bun.spawnSync([process.execPath, join(ROOT, "build.ts")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    if (built.exitCode !== 0 || !existsSync(BINARY)) {
      log(`the build failed, measuring the sources instead: ${built.stderr.toString().trim().split("\n").slice(-3).join(" / ")}`);
      return serverCommandAt(ROOT);
    }
  }
  return { kind: "binary", argv: [BINARY, "server"] };
}

/** The sources of the checkout at `root` (bench/compare.ts: another ref's worktree) through the running Bun. */
export function serverCommandAt(root: string): ServerCommand {
  return { kind: "source", argv: [process.execPath, join(root, "src/main.ts"), "server"], root };
}

export interface RunningServer {
  url: string;
  pid: number;
  /** Spawn to the first 200 of /health, in ms. */
  startMs: number;
  stop(): Promise<void>;
  /** What the server has logged so far (stderr). */
  log?(): string;
}

/** A port that was free a moment ago (the server binds it right after). */
export function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/** Spawns a real server process on loopback with its own home and waits for /health to answer 200. */
export async function spawnServer(home: string, cmd: ServerCommand, timeoutMs = 60_000, env: Record<string, string> = {}): Promise<RunningServer> {
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const proc = Bun.spawn([...cmd.argv, "--port", String(port)], {
    cwd: cmd.root ?? ROOT,
    // The bench talks from loopback without a token, on either engine (the bypass is off by default on PostgreSQL).
    env: { ...process.env, MEMSVC_HOME: home, MEMSVC_OFFLINE: "1", MEMSVC_LOG: "info", MEMSVC_LOCALHOST_BYPASS: "1", ...env },
    stdout: "ignore",
    stderr: "pipe",
  });
  let stderr = "";
  void (async () => {
    const reader = proc.stderr.getReader();
    const text = new TextDecoder();
    for (let r = await reader.read(); !r.done; r = await reader.read()) stderr += text.decode(r.value, { stream: true });
  })();
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode} before answering:\n${stderr}`);
    if (performance.now() - started > timeoutMs) {
      proc.kill();
      throw new Error(`server did not answer /health within ${timeoutMs} ms:\n${stderr}`);
    }
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) {
        await res.arrayBuffer();
        break;
      }
    } catch {
      /* not listening yet */
    }
    await Bun.sleep(2);
  }
  const startMs = performance.now() - started;
  return {
    url,
    pid: proc.pid,
    startMs,
    log: () => stderr,
    async stop() {
      proc.kill("SIGTERM");
      const code = await proc.exited;
      if (code !== 0) throw new Error(`server exited with ${code} on SIGTERM:\n${stderr}`);
    },
  };
}

/** Resident set size of a process, in MB (VmRSS; VmHWM is the peak). */
export function memoryOf(pid: number): { rss_mb: number; peak_rss_mb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rss_mb: Math.round(kb("VmRSS") / 1024), peak_rss_mb: Math.round(kb("VmHWM") / 1024) };
}

/** CPU time (user + system) a process has used so far, in ms (clock ticks of 10 ms). */
export function cpuMsOf(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/**
 * CPU of the process's main thread only, where JavaScript and SQLite run and
 * requests wait: cpuMsOf minus JavaScriptCore's JIT compiler threads, the GC's
 * helpers and the allocator's scavenger, which grow with how much code a
 * fresh server compiles, not with what a request costs once compiled.
 */
export function mainThreadCpuMsOf(pid: number): number {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

/**
 * `root` and every process it forked (its direct children: a PostgreSQL
 * postmaster's backends and helpers), summed by `measure`; a process that
 * ends meanwhile is skipped.
 */
export function sumOverTree(root: number, measure: (pid: number) => number): { total: number; processes: number } {
  let total = 0;
  let processes = 0;
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (Number(d) !== root && ppid !== root) continue;
      total += measure(Number(d));
      processes++;
    } catch {
      /* gone meanwhile */
    }
  }
  return { total, processes };
}

function statCpuMs(file: string): number {
  // Fields after the parenthesised command name: state is [0], utime [11], stime [12].
  const stat = readFileSync(file, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
