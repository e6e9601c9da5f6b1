import { afterAll, describe, expect, test } from "bun:test";
import { spawn, type Subprocess } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readRuntimeFile } from "../../src/runtime-file";
import { BUN, childEnv, ROOT, run, tempHome } from "../helpers/process";

// Real servers from source on --port 0: the port each got is read from server.json.
const started: Subprocess[] = [];
afterAll(() => {
  for (const p of started) p.kill("SIGKILL");
});

function startServer(home: string, extra: string[] = []) {
  const proc = spawn([BUN, "src/main.ts", "server", "--port", "0", ...extra], {
    env: childEnv(home),
    cwd: ROOT,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  started.push(proc);
  const stderr = new Response(proc.stderr).text();
  return { proc, stderr };
}

/** Waits until server.json names `pid` (or any pid when null) and that server answers /health. */
async function answering(home: string, pid: number | null, timeoutMs = 20_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const info = readRuntimeFile(home);
    if (info && (pid === null || info.pid === pid)) {
      const ok = await fetch(`${info.url}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return info.url;
    }
    await Bun.sleep(50);
  }
  throw new Error(`no server for ${home} answered within ${timeoutMs} ms`);
}

describe("one server per home", () => {
  test("a second server is refused naming the first (pid, URL); the first keeps serving and its server.json", async () => {
    const home = tempHome();
    const first = startServer(home);
    const url = await answering(home, first.proc.pid);
    const before = readFileSync(join(home, "server.json"), "utf8");
    const second = await run([BUN, "src/main.ts", "server", "--port", "0"], childEnv(home));
    expect(second.code).toBe(1);
    const lines = second.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`pid ${first.proc.pid}`);
    expect(lines[0]).toContain(url);
    expect(lines[0]).toContain("already running");
    // Refused before it opened anything: no listening line, no embedder line.
    expect(second.stderr).not.toMatch(/listening|embedder/);
    expect(readFileSync(join(home, "server.json"), "utf8")).toBe(before);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    // Under a service manager the same refusal is a success, so the manager does not loop.
    const service = await run([BUN, "src/main.ts", "server", "--port", "0", "--service"], childEnv(home));
    expect(service.code).toBe(0);
    expect(service.stderr).toContain(`pid ${first.proc.pid}`);
    expect(readFileSync(join(home, "server.json"), "utf8")).toBe(before);
    first.proc.kill("SIGTERM");
    expect(await first.proc.exited).toBe(0);
  });

  test("three started at the same instant: exactly one serves, the others exit 1 naming it", async () => {
    const home = tempHome();
    const servers = [startServer(home), startServer(home), startServer(home)];
    const url = await answering(home, null);
    const winnerPid = readRuntimeFile(home)!.pid;
    const losers = servers.filter((s) => s.proc.pid !== winnerPid);
    expect(losers).toHaveLength(2);
    for (const l of losers) {
      expect(await l.proc.exited).toBe(1);
      expect(await l.stderr).toContain(`pid ${winnerPid}`);
    }
    const winner = servers.find((s) => s.proc.pid === winnerPid)!;
    expect(winner.proc.exitCode).toBeNull();
    expect(readRuntimeFile(home)?.pid).toBe(winnerPid);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    winner.proc.kill("SIGTERM");
    await winner.proc.exited;
  });

  test("kill -9 leaves no lock behind: the next server starts and replaces the stale server.json", async () => {
    const home = tempHome();
    const first = startServer(home);
    await answering(home, first.proc.pid);
    first.proc.kill("SIGKILL");
    await first.proc.exited;
    expect(readRuntimeFile(home)?.pid).toBe(first.proc.pid);
    const second = startServer(home);
    const url = await answering(home, second.proc.pid);
    expect(readRuntimeFile(home)?.pid).toBe(second.proc.pid);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    second.proc.kill("SIGTERM");
    expect(await second.proc.exited).toBe(0);
    expect(readRuntimeFile(home)).toBeNull();
  });

  test("a port taken by another program still exits 1, and the home is free for the next server", async () => {
    const home = tempHome();
    const other = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("not memsvc") });
    try {
      const r = await run([BUN, "src/main.ts", "server", "--port", String(other.port)], childEnv(home));
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/in use/);
    } finally {
      other.stop(true);
    }
    const next = startServer(home);
    await answering(home, next.proc.pid);
    next.proc.kill("SIGTERM");
    await next.proc.exited;
  });
});
