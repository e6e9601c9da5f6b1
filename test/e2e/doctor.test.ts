import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeLlm, type FakeLlm } from "../helpers/fake-llm";
import { adminToken } from "../helpers/tokens";
import { BUN, childEnv, freePort, run, startProcess, tempHome, type Running } from "../helpers/process";

// `memsvc doctor` as a new user runs it: a fresh machine (HOME with no ~/.claude), then a server,
// then the hooks. Each failure must say what to do, and the exit code must say whether anything failed.
const MAIN = "src/main.ts";
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

function user(): { home: string; memsvcHome: string; env: Record<string, string> } {
  const home = tempHome();
  const memsvcHome = join(home, ".memsvc");
  return { home, memsvcHome, env: { ...childEnv(memsvcHome), HOME: home } };
}

const doctor = (env: Record<string, string>) => run([BUN, MAIN, "doctor"], env);
const line = (out: string, name: string) => out.split("\n").find((l) => new RegExp(`^\\S+\\s+${name}\\s`).test(l)) ?? "";

async function serve(memsvcHome: string, extra: Record<string, string> = {}) {
  const port = await freePort();
  // No MEMSVC_URL anywhere: doctor finds the server the way status and the hooks do.
  server = await startProcess([BUN, MAIN, "server", "--port", String(port)], childEnv(memsvcHome, extra), port);
  // doctor sends the home's config token: on PostgreSQL it must be a database token (issue 36).
  await adminToken(memsvcHome);
  return port;
}

describe("memsvc doctor", () => {
  test("server down: exit 1, says where it looked and how to start one; dependent checks are skipped", async () => {
    const u = user();
    const idle = await freePort();
    const r = await doctor({ ...u.env, MEMSVC_URL: `http://127.0.0.1:${idle}` });
    expect(r.code).toBe(1);
    expect(line(r.stdout, "server")).toMatch(/^FAIL\s+server\s+no server answers at http:\/\/127\.0\.0\.1:\d+ \(address from MEMSVC_URL\)/);
    expect(r.stdout).toContain("-> start it with `memsvc server`");
    expect(line(r.stdout, "language model")).toMatch(/^skip/);
    expect(line(r.stdout, "mcp /mcp")).toMatch(/^skip/);
  });

  test("no Claude Code on the machine: its hooks are not asked for (skip, not a failure)", async () => {
    const u = user();
    await serve(u.memsvcHome);
    const r = await doctor(u.env);
    expect(line(r.stdout, "claude code hooks")).toMatch(/^skip\s+claude code hooks\s+Claude Code is not on this machine/);
    expect(r.stdout).not.toContain("FAIL");
  });

  test("server up with a language model that answers, hooks installed: every check passes, exit 0", async () => {
    const u = user();
    expect((await run([BUN, MAIN, "hooks", "install"], u.env)).code).toBe(0);
    const port = await serve(u.memsvcHome, { MEMSVC_LLM_BASE_URL: fake.baseURL, MEMSVC_LLM_MODEL: "fake-distiller" });
    const before = fake.requests.length;
    const r = await doctor(u.env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(line(r.stdout, "server")).toMatch(new RegExp(`^ok\\s+server\\s+http://127\\.0\\.0\\.1:${port} \\(address from server\\.json\\)`));
    expect(line(r.stdout, "language model")).toMatch(/^ok\s+language model\s+openai-compatible@127\.0\.0\.1:\d+ fake-distiller, answering/);
    expect(fake.requests.length).toBe(before + 1);
    // The tests run without the model, so the embedder is the offline fallback: a warning, not a failure.
    expect(line(r.stdout, "embedder")).toMatch(/^warn\s+embedder\s+offline fallback.*answering/);
    expect(line(r.stdout, "claude code hooks")).toMatch(
      new RegExp(`^ok\\s+claude code hooks\\s+4/4 installed in .*settings\\.json; they reach http://127\\.0\\.0\\.1:${port}`),
    );
    expect(line(r.stdout, "claude code mcp")).toMatch(/^ok\s+claude code mcp\s+memsvc MCP server registered/);
    expect(line(r.stdout, "mcp /sse")).toMatch(/^ok/);
    expect(line(r.stdout, "mcp /mcp")).toMatch(/^ok\s+mcp \/mcp\s+.*answered initialize \(memsvc/);
    expect(r.stdout).toContain("all checks passed");

    const json = await run([BUN, MAIN, "doctor", "--json"], u.env);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report.ok).toBe(true);
    // "claude code mcp": since harness wiring, install registers memsvc's MCP server too and doctor checks it for every harness found; "capture backlog" came with the backlog (8cdab0d) without this list being updated.
    expect(report.checks.map((c: any) => c.name)).toEqual([
      "server",
      "network",
      "embedder",
      "language model",
      "claude code hooks",
      "claude code mcp",
      "mcp /sse",
      "mcp /mcp",
      "autostart",
      "capture backlog",
    ]);
  });

  test("hooks missing and a language model that is down: exit 1, each says what to do", async () => {
    const u = user();
    // Claude Code is here (its folder), its hooks are not.
    mkdirSync(join(u.home, ".claude"));
    const dead = await freePort();
    await serve(u.memsvcHome, { MEMSVC_LLM_BASE_URL: `http://127.0.0.1:${dead}/v1`, MEMSVC_LLM_MODEL: "qwen" });
    const r = await doctor(u.env);
    expect(r.code).toBe(1);
    expect(line(r.stdout, "server")).toMatch(/^ok/);
    expect(line(r.stdout, "claude code hooks")).toMatch(/^FAIL\s+claude code hooks\s+not installed in .*\.claude\/settings\.json/);
    expect(r.stdout).toContain("-> run `memsvc hooks install`");
    expect(line(r.stdout, "language model")).toMatch(/^FAIL\s+language model\s+.* qwen: the language model at http:\/\/127\.0\.0\.1:\d+\/v1 is unreachable/);
    expect(r.stdout).toContain("check that the model server runs");
    expect(r.stdout).toContain("2 checks failed");
  });

  test("hooks installed for another home whose server is not running: the hooks check fails and says so", async () => {
    const u = user();
    const elsewhere = { ...u.env, MEMSVC_HOME: join(u.home, "other-home") };
    expect((await run([BUN, MAIN, "hooks", "install"], elsewhere)).code).toBe(0);
    writeConfigPort(join(u.home, "other-home"), await freePort());
    await serve(u.memsvcHome);
    const r = await doctor(u.env);
    expect(r.code).toBe(1);
    expect(line(r.stdout, "claude code hooks")).toMatch(
      /^FAIL\s+claude code hooks\s+installed in .*, but they would call http:\/\/127\.0\.0\.1:\d+ \(home .*other-home\), where no server answers/,
    );
  });
});

function writeConfigPort(home: string, port: number) {
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "config.json"), JSON.stringify({ port }));
}
