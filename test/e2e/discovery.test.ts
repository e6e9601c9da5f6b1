import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoriesReply, startFakeLlm, type FakeLlm } from "../helpers/fake-llm";
import { adminToken } from "../helpers/tokens";
import { BUN, childEnv, freePort, ROOT, run, startProcess, tempHome, type Running } from "../helpers/process";

// A new user starts `memsvc server --port N` (or sets `port` in config.json) and never exports
// MEMSVC_URL: status, capture and the harness hooks must still reach that server.
const MAIN = "src/main.ts";
const userHome = mkdtempSync(join(tmpdir(), "memsvc-user-"));
const memsvc = (args: string[], env: Record<string, string>, stdin?: string) => {
  if (stdin === undefined) return run([BUN, MAIN, ...args], env);
  return (async () => {
    const p = Bun.spawn([BUN, MAIN, ...args], { cwd: ROOT, env, stdin: new Blob([stdin]), stdout: "pipe", stderr: "pipe" });
    const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
    return { code, stdout, stderr };
  })();
};

let fake: FakeLlm;
let server: Running | null = null;
beforeAll(() => {
  fake = startFakeLlm();
});
afterAll(async () => {
  await fake.stop();
});
afterEach(() => {
  server?.proc.kill("SIGKILL");
  server = null;
});

/** A client environment: the same home as the server, no MEMSVC_URL, a fake ~ for ~/.claude. */
const clientEnv = (home: string) => ({ ...childEnv(home), HOME: userHome });

describe("client commands find a server on a non-default port without MEMSVC_URL", () => {
  test("server --port N: status, hook session-start and capture reach it; server.json is 0600 and gone after a clean stop", async () => {
    const home = tempHome();
    const port = await freePort();
    const serverEnv = childEnv(home, { MEMSVC_LLM_BASE_URL: fake.baseURL, MEMSVC_LLM_MODEL: "fake-distiller" });
    expect(serverEnv.MEMSVC_URL).toBeUndefined();
    server = await startProcess([BUN, MAIN, "server", "--port", String(port)], serverEnv, port);
    // Clients send the home's config token: on PostgreSQL it must be a database token (issue 36).
    await adminToken(home);

    const runtime = join(home, "server.json");
    const info = JSON.parse(readFileSync(runtime, "utf8"));
    expect(info).toMatchObject({ pid: server.proc.pid, host: "127.0.0.1", port, url: `http://127.0.0.1:${port}` });
    expect(statSync(runtime).mode & 0o777).toBe(0o600);

    const env = clientEnv(home);
    const status = await memsvc(["status"], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`http://127.0.0.1:${port} (ok; address from server.json)`);

    const put = await fetch(`http://127.0.0.1:${port}/identity`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sections: { about: "Dana prefers small pull requests." } }),
    });
    expect(put.status).toBe(200);
    const hook = await memsvc(["hook", "session-start"], env, JSON.stringify({ session_id: "s-1", cwd: "/home/dana/src/shop-api" }));
    expect(hook.code).toBe(0);
    expect(hook.stdout).toContain("Dana prefers small pull requests.");

    fake.fallback = () => memoriesReply("shop-api migrations run on the staging host first");
    const transcript = join(tempHome(), "session.jsonl");
    copyFileSync(join(ROOT, "test/fixtures/claude-code/orders-migration.jsonl"), transcript);
    const captured = await memsvc(["capture", "--file", transcript], env);
    expect(captured.code).toBe(0);
    expect(captured.stdout).toMatch(/sent [1-9]\d* segment/);
    const memories = await (await fetch(`http://127.0.0.1:${port}/recent`)).json();
    expect(JSON.stringify(memories)).toContain("staging host first");

    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    server = null;
    expect(existsSync(runtime)).toBe(false);
    // Not the default 8787: on a shared machine something else may be listening there.
    const idle = await freePort();
    writeFileSync(join(home, "config.json"), JSON.stringify({ ...JSON.parse(readFileSync(join(home, "config.json"), "utf8")), port: idle }));
    const down = await memsvc(["status"], env);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`no server answers at http://127.0.0.1:${idle}`);
  });

  test("port in config.json: found while running; a crashed server's stale server.json is ignored", async () => {
    const home = tempHome();
    const port = await freePort();
    writeFileSync(join(home, "config.json"), JSON.stringify({ port }));
    server = await startProcess([BUN, MAIN, "server"], childEnv(home), port);
    // Clients send the home's config token: on PostgreSQL it must be a database token (issue 36).
    await adminToken(home);
    const env = clientEnv(home);
    const status = await memsvc(["status", "--json"], env);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ status: "ok", url: `http://127.0.0.1:${port}` });

    // kill -9 leaves the file behind; its pid is dead, so clients fall back to the config port.
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    server = null;
    expect(existsSync(join(home, "server.json"))).toBe(true);
    const down = await memsvc(["status"], env);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`no server answers at http://127.0.0.1:${port}`);
    expect(down.stderr).toContain("address from config port");
  });
});
