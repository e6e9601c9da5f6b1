import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readState, stateDir } from "../../src/capture/watermark";
import { DIST_TIMEOUT_MS, hostBinary } from "../helpers/dist";
import { memoriesReply, startFakeLlm, type FakeLlm } from "../helpers/fake-llm";
import { freePort, ROOT } from "../helpers/process";

/**
 * The first ten minutes, as a new user lives them, on the compiled binary
 * alone: a fresh HOME holding ~/.claude, ~/.codex and ~/.gemini, no service
 * manager that works (a container: the stand-in systemctl fails as
 * `systemctl --user` does without a user bus), `memsvc setup --yes`, then a
 * Claude Code session ends and the next one's prompt recalls it.
 */
const FIXTURE = join(ROOT, "test/fixtures/claude-code/orders-migration.jsonl");
const SESSION = "5f2c8a1e-7b3d-4c19-a0e4-9d61b2f38c57";
const FACT = "The staging deploy hangs because the nightly export cron holds a lock on the orders table during the orders migration.";

let bin: string;
const cleanups: (() => void)[] = [];
beforeAll(async () => {
  bin = await hostBinary();
}, DIST_TIMEOUT_MS);
afterAll(() => {
  for (const c of cleanups.reverse()) c();
});

interface Machine {
  home: string;
  env: Record<string, string>;
  memsvcHome: string;
}

/** A fresh laptop: HOME with the harness folders, PATH with the binary and a systemctl that cannot reach a user bus. */
function freshMachine(extra: Record<string, string> = {}): Machine {
  const home = mkdtempSync(join(tmpdir(), "memsvc-newuser-"));
  for (const d of [".claude", ".codex", ".gemini"]) mkdirSync(join(home, d));
  const stand = join(home, "stand-ins");
  mkdirSync(stand);
  writeFileSync(join(stand, "systemctl"), '#!/bin/sh\necho "Failed to connect to bus: No medium found" >&2\nexit 1\n');
  chmodSync(join(stand, "systemctl"), 0o755);
  const env: Record<string, string> = {
    HOME: home,
    PATH: `${join(bin, "..")}:${stand}:/usr/bin:/bin`,
    MEMSVC_OFFLINE: "1",
    LANG: "C.UTF-8",
    ...extra,
  };
  const memsvcHome = join(home, ".memsvc");
  cleanups.push(() => {
    try {
      const pid = JSON.parse(readFileSync(join(memsvcHome, "server.json"), "utf8")).pid;
      process.kill(pid, "SIGKILL");
    } catch {
      /* no server */
    }
    rmSync(home, { recursive: true, force: true });
  });
  return { home, env, memsvcHome };
}

async function memsvc(m: Machine, args: string[], stdin?: string, timeoutMs = 120_000) {
  const p = Bun.spawn([bin, ...args], {
    env: m.env,
    cwd: m.home,
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => p.kill("SIGKILL"), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr, all: `${stdout}\n${stderr}` };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function serverUrl(m: Machine): string {
  return JSON.parse(readFileSync(join(m.memsvcHome, "server.json"), "utf8")).url as string;
}

/** Ends a Claude Code session the way Claude Code does: the SessionEnd hook with its JSON on stdin. */
async function endSession(m: Machine): Promise<string> {
  const dir = join(m.home, ".claude", "projects", "-home-dana-src-shop-api");
  mkdirSync(dir, { recursive: true });
  const transcript = join(dir, `${SESSION}.jsonl`);
  copyFileSync(FIXTURE, transcript);
  const r = await memsvc(
    m,
    ["hook", "session-end"],
    JSON.stringify({ session_id: SESSION, transcript_path: transcript, cwd: "/home/dana/src/shop-api", hook_event_name: "SessionEnd", reason: "exit" }),
  );
  expect(r.code).toBe(0);
  return transcript;
}

async function waitForMemories(url: string, timeoutMs = 60_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const recent = (await (await fetch(`${url}/recent?limit=20`)).json()) as any;
    const items = recent.results ?? recent.memories ?? [];
    if (items.length > 0) return items;
    await Bun.sleep(250);
  }
  return [];
}

function fakeModel(): FakeLlm {
  const fake = startFakeLlm();
  fake.fallback = () => memoriesReply({ content: FACT, memory_type: "knowledge", tags: ["deploy", "orders"] });
  cleanups.push(() => void fake.stop());
  return fake;
}

describe("memsvc setup on a fresh machine (compiled binary)", () => {
  test("with a model behind OPENAI_BASE_URL: setup wires everything, the session ends, the next prompt recalls it", async () => {
    const fake = fakeModel();
    const m = freshMachine({ OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: "sk-test-not-a-real-key", OPENAI_MODEL: "fake-model" });
    const port = await freePort();
    const started = performance.now();
    const setup = await memsvc(m, ["setup", "--yes", "--port", String(port)]);
    expect(setup.code, setup.all).toBe(0);
    expect(setup.stdout).toContain("answered a test call");

    // Hooks and MCP for each harness found, in the files each harness reads.
    const claude = JSON.parse(readFileSync(join(m.home, ".claude", "settings.json"), "utf8"));
    expect(Object.keys(claude.hooks).sort()).toEqual(["PreCompact", "SessionEnd", "SessionStart", "UserPromptSubmit"]);
    expect(JSON.parse(readFileSync(join(m.home, ".claude.json"), "utf8")).mcpServers.memsvc.args).toContain("mcp");
    const codex = readFileSync(join(m.home, ".codex", "config.toml"), "utf8");
    expect(codex).toMatch(/^notify\s*=.*codex-notify/m);
    expect(codex).toContain("[mcp_servers.memsvc]");
    const gemini = JSON.parse(readFileSync(join(m.home, ".gemini", "settings.json"), "utf8"));
    expect(gemini.mcpServers.memsvc).toBeDefined();
    expect(Object.keys(gemini.hooks ?? {}).length).toBeGreaterThan(0);
    // Autostart written although no manager could load it; the server was started detached.
    expect(existsSync(join(m.home, ".config", "systemd", "user", "memsvc.service"))).toBe(true);
    const url = serverUrl(m);
    expect(url).toBe(`http://127.0.0.1:${port}`);
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const config = JSON.parse(readFileSync(join(m.memsvcHome, "config.json"), "utf8"));
    expect(config.llm).toMatchObject({ baseURL: fake.baseURL, model: "fake-model" });

    const doctor = await memsvc(m, ["doctor"]);
    expect(doctor.code, doctor.all).toBe(0);
    expect(doctor.stdout).not.toContain("FAIL");

    await endSession(m);
    const memories = await waitForMemories(url);
    expect(memories.map((x) => x.content).join("\n")).toContain("nightly export cron");
    const recall = await memsvc(
      m,
      ["hook", "user-prompt"],
      JSON.stringify({
        session_id: "next-session",
        prompt: "why does the staging deploy hang on the orders migration?",
        cwd: "/home/dana/src/shop-api",
        hook_event_name: "UserPromptSubmit",
      }),
    );
    expect(recall.code).toBe(0);
    expect(recall.stdout).toContain("Memory recall");
    expect(recall.stdout).toMatch(/export cron|orders table/);
    const firstRecallSeconds = (performance.now() - started) / 1000;
    console.log(`setup e2e: from \`memsvc setup\` to the first recalled memory ${firstRecallSeconds.toFixed(1)} s`);

    // A second run changes nothing and says so.
    const again = await memsvc(m, ["setup", "--yes", "--port", String(port)]);
    expect(again.code, again.all).toBe(0);
    expect(again.stdout).toContain("nothing changed: this machine was set up already");
    expect(again.stdout).not.toMatch(/^\s+changed: /m);

    // Undo: every file setup created is gone again, the server it started is stopped, the memories stay.
    const pid = JSON.parse(readFileSync(join(m.memsvcHome, "server.json"), "utf8")).pid as number;
    const undo = await memsvc(m, ["setup", "--uninstall", "--yes"]);
    expect(undo.code, undo.all).toBe(0);
    for (const f of [".claude/settings.json", ".claude.json", ".codex/config.toml", ".gemini/settings.json", ".config/systemd/user/memsvc.service"])
      expect(existsSync(join(m.home, f)), f).toBe(false);
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && isAlive(pid)) await Bun.sleep(100);
    expect(isAlive(pid)).toBe(false);
    expect(existsSync(join(m.memsvcHome, "memsvc.db"))).toBe(true);
  }, 240_000);

  test("without any model: setup says what is missing; the session waits and is distilled once `setup --llm` configures one", async () => {
    const m = freshMachine();
    const port = await freePort();
    const setup = await memsvc(m, ["setup", "--yes", "--port", String(port)]);
    expect(setup.code, setup.all).toBe(0);
    expect(setup.stdout).toContain("no language model found");
    expect(setup.stdout).toContain("memsvc setup --llm");
    const url = serverUrl(m);

    const transcript = await endSession(m);
    // The capture runs detached: wait for it to find the 503 and record the session as waiting.
    const deadline = Date.now() + 30_000;
    let status = "";
    while (Date.now() < deadline) {
      status = (await memsvc(m, ["status"])).stdout;
      if (status.includes("wait")) break;
      await Bun.sleep(250);
    }
    expect(status).toContain("1 session waits for a language model");
    const doctor = await memsvc(m, ["doctor"]);
    expect(doctor.stdout).toContain("1 session waits for a language model");
    const backlog = JSON.parse(readFileSync(join(m.memsvcHome, "state", "capture", "backlog.json"), "utf8"));
    expect(backlog.sessions.map((s: any) => s.file)).toEqual([transcript]);
    // The watermark stays at the start: nothing of the session counts as captured yet.
    expect(readState(stateDir(m.memsvcHome), transcript)?.offset ?? 0).toBe(0);
    expect((await waitForMemories(url, 500)).length).toBe(0);

    const fake = fakeModel();
    const configure = await memsvc(m, ["setup", "--yes", "--llm", fake.baseURL, "--model", "fake-model"]);
    expect(configure.code, configure.all).toBe(0);
    expect(configure.stdout).toContain("being distilled");
    const after = serverUrl(m);
    const memories = await waitForMemories(after);
    expect(memories.map((x) => x.content).join("\n")).toContain("nightly export cron");
    expect(fake.receivedText()).toContain("orders");
  }, 240_000);

  test("--dry-run prints every change and writes nothing; answering no to every question changes nothing and says so", async () => {
    const fake = fakeModel();
    const m = freshMachine({ OPENAI_BASE_URL: fake.baseURL, OPENAI_API_KEY: "sk-test-not-a-real-key", OPENAI_MODEL: "fake-model" });
    // The user's own files, as each harness documents them.
    for (const [rel, fixture] of [
      [".claude/settings.json", "claude-code/config/settings.json"],
      [".claude.json", "claude-code/config/claude.json"],
      [".codex/config.toml", "codex/config/config.toml"],
      [".gemini/settings.json", "gemini/config/settings.json"],
    ])
      copyFileSync(join(ROOT, "test/fixtures", fixture), join(m.home, rel));
    const before = snapshot(m.home);
    const port = String(await freePort());

    const dry = await memsvc(m, ["setup", "--dry-run", "--port", port]);
    expect(dry.code, dry.all).toBe(0);
    for (const f of [
      ".memsvc/config.json",
      ".claude/settings.json",
      ".claude.json",
      ".codex/config.toml",
      ".gemini/settings.json",
      ".config/systemd/user/memsvc.service",
    ])
      expect(dry.stdout, f).toContain(join(m.home, f));
    expect(dry.stdout).toContain("would use OpenAI");
    expect(dry.stdout).toContain("dry run: nothing was written");
    expect(snapshot(m.home)).toEqual(before);

    const no = await memsvc(m, ["setup", "--port", port], "n\n".repeat(12));
    expect(no.stdout).toContain("nothing changed: you answered no to home, language model, Claude Code, Codex CLI, Gemini CLI, autostart");
    expect(no.stdout).not.toContain("set up already");
    expect(snapshot(m.home)).toEqual(before);
  }, 240_000);
});

/** Every file under a folder with its content, for "nothing was written". */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of readdirSync(dir, { recursive: true, withFileTypes: false }) as string[]) {
    const path = join(dir, rel);
    try {
      out[rel] = readFileSync(path, "utf8");
    } catch {
      out[rel] = "(folder)";
    }
  }
  return out;
}
