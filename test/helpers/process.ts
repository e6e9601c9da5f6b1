import { spawn, type Subprocess } from "bun";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { engineEnv } from "./engine";

export const ROOT = join(import.meta.dir, "..", "..");
export const BUN = process.execPath;

export function tempHome(): string {
  return mkdtempSync(join(tmpdir(), "memsvc-cli-"));
}

/** Environment for a child memsvc: a given home, offline, no inherited model settings, the test engine's store. */
export function childEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("MEMSVC_")) env[k] = v;
  // The localhost bypass stays on for child servers whatever their engine or bind (its default is off on
  // PostgreSQL and on a non-loopback bind): the suite talks to them from loopback without a token.
  return { ...env, MEMSVC_HOME: home, MEMSVC_OFFLINE: "1", MEMSVC_CACHE_DIR: join(home, ".cache"), MEMSVC_LOCALHOST_BYPASS: "1", ...engineEnv(home), ...extra };
}

/**
 * A port for a child server to bind, free when checked. Port 0 would hand out
 * one from the kernel's ephemeral range (32768-60999 here), where any other
 * process's outgoing connection or port-0 listener can take it before the
 * child binds: so the port is drawn below that range, where only explicit
 * binds land, and checked by binding it. (Passing --port 0 to the child would
 * need the server to report the port it got; it does not yet.)
 */
const FREE_PORT_LOW = 20_000;
const FREE_PORT_HIGH = 32_767;
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = FREE_PORT_LOW + Math.floor(Math.random() * (FREE_PORT_HIGH - FREE_PORT_LOW + 1));
    if (await canBind(port)) return port;
  }
  throw new Error(`no free port in ${FREE_PORT_LOW}-${FREE_PORT_HIGH} after 50 tries`);
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** Runs a command to completion; returns exit code and output. */
export async function run(cmd: string[], env: Record<string, string>, cwd = ROOT, timeoutMs = 30_000) {
  const p = spawn(cmd, { env, cwd, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill(), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export interface Running {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  /** From spawn to the first /health answer with status 200. */
  startMs: number;
  stderr(): string;
}

/** Starts a server process and waits (polling every 20 ms) until /health answers 200. */
export async function startProcess(cmd: string[], env: Record<string, string>, port: number, cwd = ROOT, timeoutMs = 20_000): Promise<Running> {
  const started = performance.now();
  const proc = spawn(cmd, { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let err = "";
  void (async () => {
    const reader = proc.stderr.getReader();
    const dec = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      err += dec.decode(value);
    }
  })();
  const url = `http://127.0.0.1:${port}`;
  while (performance.now() - started < timeoutMs) {
    if (proc.exitCode !== null) throw new Error(`server exited ${proc.exitCode}: ${err}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return { proc, url, startMs: performance.now() - started, stderr: () => err };
    } catch {
      /* not up yet */
    }
    await Bun.sleep(20);
  }
  proc.kill("SIGKILL");
  throw new Error(`server did not answer /health within ${timeoutMs} ms: ${err}`);
}
