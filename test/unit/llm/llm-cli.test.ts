import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadConfig, type Config, type HarnessCliProvider } from "../../../src/config";
import { AppError } from "../../../src/errors";
import { createLlmClient, type ChatMessage } from "../../../src/llm/client";
import { GEMINI_INSTRUCTION } from "../../../src/llm/cli-gemini";
import { readCallCount } from "../../../src/llm/daily-cap";
import { findHarnessClis, findOnPath } from "../../../src/llm/find-cli";

/**
 * The harness CLI providers against stand-in scripts that behave as each CLI
 * documents its headless mode (test/fixtures/harness-cli): real processes,
 * real pipes, real temp folders.
 */

const STANDINS = resolve(import.meta.dir, "../../fixtures/harness-cli");
const SECRET = `ghp_${"Standin7Secret".repeat(3)}`;

let work: string;
let stateDir: string;
const savedEnv = { dir: process.env.HARNESS_STANDIN_DIR, mode: process.env.HARNESS_STANDIN_MODE, home: process.env.HOME };

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), "standin-"));
  stateDir = join(work, "state");
  process.env.HARNESS_STANDIN_DIR = work;
  // The gemini stand-in records its session under ~/.gemini, as the real one does: not the real home's.
  process.env.HOME = join(work, "home");
  delete process.env.HARNESS_STANDIN_MODE;
});
afterEach(() => {
  for (const [k, v] of [
    ["HARNESS_STANDIN_DIR", savedEnv.dir],
    ["HARNESS_STANDIN_MODE", savedEnv.mode],
    ["HOME", savedEnv.home],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

function llmConfig(provider: HarnessCliProvider, extra: Partial<Config["llm"]> = {}): Config["llm"] {
  const bin = provider.replace("-cli", "");
  return { provider, baseURL: null, apiKey: null, model: null, command: join(STANDINS, bin), dailyCap: 50, timeoutMs: 10_000, contextChars: 60_000, ...extra };
}

function client(provider: HarnessCliProvider, extra: Partial<Config["llm"]> = {}) {
  const c = createLlmClient(llmConfig(provider, extra), stateDir);
  if (!c) throw new Error("no client");
  return c;
}

const MESSAGES: ChatMessage[] = [
  { role: "system", content: "You distil sessions. Answer with one JSON object." },
  { role: "user", content: `user: the deploy token is ${SECRET}; the orders migration needs lock_timeout = 5s.` },
];

const argv = () => readFileSync(join(work, "argv"), "utf8").split("\n").slice(0, -1);
const received = () => readFileSync(join(work, "stdin"), "utf8");

async function failure(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe("unavailable");
    return e as AppError;
  }
  throw new Error("expected the call to fail");
}

/** Running: a zombie (killed, waiting for a reaper that PID 1 of a container may be slow to be) is not. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = `/proc/${pid}/stat`;
  return !(existsSync(stat) && readFileSync(stat, "utf8").split(") ").at(-1)!.startsWith("Z"));
};

describe("each provider returns the model's JSON, asked as its CLI documents", () => {
  const expectedArgv: Record<HarnessCliProvider, (model: string | null) => string[]> = {
    "claude-cli": (m) => ["-p", "--output-format", "json", "--tools", "", "--strict-mcp-config", "--no-session-persistence", ...(m ? ["--model", m] : [])],
    "codex-cli": (m) => [
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--sandbox",
      "read-only",
      "--ephemeral",
      "-o",
      "<workdir>/last-message.txt",
      ...(m ? ["-m", m] : []),
      "-",
    ],
    "gemini-cli": (m) => ["-p", GEMINI_INSTRUCTION, "--output-format", "json", "-e", "none", ...(m ? ["-m", m] : [])],
  };
  for (const provider of ["claude-cli", "codex-cli", "gemini-cli"] as const) {
    test(`${provider}: parsed JSON, flags, prompt on stdin with the secret redacted`, async () => {
      const answer = {
        memories: [{ content: 'Migrations on "orders" need lock_timeout = 5s.\nOtherwise the deploy blocks.', memory_type: "learnings", tags: ["postgres"] }],
      };
      writeFileSync(join(work, "reply.txt"), `Here it is:\n\`\`\`json\n${JSON.stringify(answer, null, 2)}\n\`\`\`\n`);
      const c = client(provider, { model: "the-model" });
      expect(await c.chatJson(MESSAGES)).toEqual(answer);
      // argv: the documented flags and nothing of the prompt.
      const args = argv();
      const norm = args.map((a) => a.replace(/^.*\/memsvc-llm-[^/]+\//, "<workdir>/"));
      expect(norm).toEqual(expectedArgv[provider]("the-model"));
      expect(args.join(" ")).not.toContain("lock_timeout");
      // stdin: the whole prompt, redacted before it left.
      const input = received();
      expect(input).toContain("You distil sessions.");
      expect(input).toContain("lock_timeout = 5s");
      expect(input).not.toContain(SECRET);
      expect(input).toContain("[REDACTED");
      // The call's temp folder (its cwd) is gone afterwards.
      const workDir = args.find((a) => a.includes("memsvc-llm-"));
      if (workDir) expect(existsSync(join(workDir, ".."))).toBe(false);
    });
  }

  test("gemini-cli: the session Gemini CLI recorded for the call is removed (capture would read it back)", async () => {
    await client("gemini-cli").chatJson(MESSAGES);
    const chats = readFileSync(join(work, "chats"), "utf8").trim();
    expect(chats.startsWith(join(work, "home", ".gemini", "tmp"))).toBe(true);
    expect(existsSync(join(chats, ".."))).toBe(false);
    // Only that folder: another project's sessions stay.
    const other = join(work, "home", ".gemini", "tmp", "f".repeat(64), "chats");
    mkdirSync(other, { recursive: true });
    process.env.HARNESS_STANDIN_MODE = "logged-out";
    await client("gemini-cli")
      .chatJson(MESSAGES)
      .catch(() => {});
    expect(existsSync(join(readFileSync(join(work, "chats"), "utf8").trim(), ".."))).toBe(false);
    expect(existsSync(other)).toBe(true);
  });

  test("no model configured: no model flag, and the label says so", async () => {
    const c = client("claude-cli");
    await c.chatJson(MESSAGES);
    expect(argv()).not.toContain("--model");
    expect(c.label).toBe("claude-cli (Claude Code headless, subscription) default model");
    expect(client("gemini-cli", { model: "flash" }).label).toBe("gemini-cli (Gemini CLI headless, subscription) flash");
  });

  test("the call runs in a fresh private temp folder, not the server's cwd", async () => {
    writeFileSync(join(work, "reply.txt"), "{}");
    const c = client("claude-cli");
    const before = new Set(readdirSync(tmpdir()).filter((n) => n.startsWith("memsvc-llm-")));
    await c.chatJson(MESSAGES);
    const after = readdirSync(tmpdir()).filter((n) => n.startsWith("memsvc-llm-") && !before.has(n));
    expect(after).toEqual([]); // removed after the call
    const pid = Number(readFileSync(join(work, "pid"), "utf8"));
    expect(pid).toBeGreaterThan(0);
  });
});

describe("every failure is `unavailable` with a message free of the transcript", () => {
  for (const provider of ["claude-cli", "codex-cli", "gemini-cli"] as const) {
    test(`${provider}: not logged in`, async () => {
      process.env.HARNESS_STANDIN_MODE = "logged-out";
      const e = await failure(client(provider).chatJson(MESSAGES));
      expect(e.message).toMatch(/is not logged in: run `(claude|codex|gemini)/);
      expect(e.message).not.toContain("lock_timeout");
    });
    test(`${provider}: output that is not the documented JSON`, async () => {
      process.env.HARNESS_STANDIN_MODE = "garbage";
      const e = await failure(client(provider).chatJson(MESSAGES));
      expect(e.message).toMatch(/printed no JSON|without an agent message/);
    });
    test(`${provider}: a reply that holds no JSON`, async () => {
      process.env.HARNESS_STANDIN_MODE = "prose";
      const e = await failure(client(provider).chatJson(MESSAGES));
      expect(e.message).toMatch(/answered \d+ characters holding no JSON/);
    });
  }

  test("hang: unavailable within the timeout, and the CLI and its child are gone", async () => {
    process.env.HARNESS_STANDIN_MODE = "hang";
    const started = performance.now();
    const e = await failure(client("claude-cli", { timeoutMs: 700 }).chatJson(MESSAGES));
    const took = performance.now() - started;
    expect(e.message).toMatch(/did not answer within 1 s \(llm.timeoutMs = 700\); its process was stopped/);
    expect(took).toBeLessThan(700 + 2500);
    const pid = Number(readFileSync(join(work, "pid"), "utf8"));
    const grandchild = Number(readFileSync(join(work, "grandchild.pid"), "utf8"));
    // The leader is reaped before the promise settles; the group's stragglers get a moment.
    for (let i = 0; i < 50 && (alive(pid) || alive(grandchild)); i++) await Bun.sleep(20);
    expect(alive(pid)).toBe(false);
    expect(alive(grandchild)).toBe(false);
  });

  test("an abort signal stops the CLI at once", async () => {
    process.env.HARNESS_STANDIN_MODE = "hang";
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const started = performance.now();
    const e = await failure(client("gemini-cli", { timeoutMs: 30_000 }).chatJson(MESSAGES, { signal: ac.signal }));
    expect(e.message).toMatch(/cancelled/);
    expect(performance.now() - started).toBeLessThan(3000);
  });

  test("not installed: named, with what to do, and no call counted", async () => {
    const c = client("codex-cli", { command: null });
    const saved = process.env.PATH;
    process.env.PATH = join(work, "empty-bin");
    try {
      const e = await failure(c.chatJson(MESSAGES));
      expect(e.message).toBe("codex (Codex CLI) was not found on PATH; install it, or set llm.command to its absolute path");
    } finally {
      process.env.PATH = saved;
    }
    expect(readCallCount(stateDir).calls).toBe(0);
  });

  test("llm.command that is not executable", async () => {
    const file = join(work, "claude");
    writeFileSync(file, "#!/bin/sh\n");
    chmodSync(file, 0o644);
    const e = await failure(client("claude-cli", { command: file }).chatJson(MESSAGES));
    expect(e.message).toContain("is not an executable file");
  });

  test("a CLI that exits non-zero says its code and the last line of stderr, redacted", async () => {
    const file = join(work, "bin", "claude");
    mkdirSync(join(work, "bin"));
    writeFileSync(file, `#!/bin/sh\ncat > /dev/null\necho "starting" >&2\necho "fatal: rate limited for key ${SECRET}" >&2\nexit 3\n`);
    chmodSync(file, 0o755);
    const e = await failure(client("claude-cli", { command: file }).chatJson(MESSAGES));
    expect(e.message).toMatch(/^claude \(Claude Code\) exited with code 3: fatal: rate limited for key \[REDACTED/);
    expect(e.message).not.toContain(SECRET);
  });
});

describe("finding the CLIs on PATH", () => {
  test("findOnPath and findHarnessClis find executables only, first on PATH first", () => {
    const a = join(work, "a");
    const b = join(work, "b");
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(join(a, "codex"), "not executable");
    chmodSync(join(a, "codex"), 0o644);
    for (const name of ["codex", "claude"]) {
      writeFileSync(join(b, name), "#!/bin/sh\n");
      chmodSync(join(b, name), 0o755);
    }
    mkdirSync(join(a, "gemini")); // a folder is no program
    const env = { PATH: [a, b].join(":") };
    expect(findOnPath("codex", env)).toBe(join(b, "codex"));
    expect(findHarnessClis(env)).toEqual([
      { provider: "claude-cli", command: join(b, "claude"), name: "Claude Code" },
      { provider: "codex-cli", command: join(b, "codex"), name: "Codex CLI" },
    ]);
    expect(findHarnessClis({ PATH: "" })).toEqual([]);
  });

  test("Windows: .cmd and .exe shims, in PATHEXT order", () => {
    const d = join(work, "win");
    mkdirSync(d);
    writeFileSync(join(d, "gemini.cmd"), "@echo off\n");
    writeFileSync(join(d, "claude.exe"), "MZ");
    const env = { Path: d, PATHEXT: ".COM;.EXE;.BAT;.CMD" };
    expect(findOnPath("gemini", env, "win32")).toBe(join(d, "gemini.cmd"));
    expect(findOnPath("claude", env, "win32")).toBe(join(d, "claude.exe"));
    expect(findOnPath("codex", env, "win32")).toBeNull();
  });
});

describe("config", () => {
  const homeWith = (json: unknown) => {
    const home = mkdtempSync(join(tmpdir(), "cfg-"));
    writeFileSync(join(home, "config.json"), JSON.stringify(json));
    return home;
  };
  test("a CLI provider needs no baseURL; command, dailyCap and the CLI defaults", () => {
    const c = loadConfig({ MEMSVC_HOME: homeWith({ llm: { provider: "claude-cli", model: "sonnet" } }) });
    expect(c.llm).toMatchObject({ provider: "claude-cli", model: "sonnet", baseURL: null, command: null, dailyCap: 50, contextChars: 64_000 });
    expect(c.nightly.maxModelCalls).toBe(10);
    expect(createLlmClient(c.llm, c.paths.state)?.label).toBe("claude-cli (Claude Code headless, subscription) sonnet");
    const set = loadConfig({
      MEMSVC_HOME: homeWith({ llm: { provider: "gemini-cli", command: "/opt/bin/gemini", dailyCap: 5, contextChars: 30_000 }, nightly: { maxModelCalls: 3 } }),
    });
    expect(set.llm).toMatchObject({ command: "/opt/bin/gemini", dailyCap: 5, contextChars: 30_000 });
    expect(set.nightly.maxModelCalls).toBe(3);
    const openai = loadConfig({ MEMSVC_HOME: homeWith({}) });
    expect(openai.llm).toMatchObject({ provider: "openai", contextChars: 24_000 });
    expect(openai.nightly.maxModelCalls).toBe(40);
    expect(createLlmClient(openai.llm, openai.paths.state)).toBeNull();
    expect(loadConfig({ MEMSVC_HOME: homeWith({}), MEMSVC_LLM_PROVIDER: "codex-cli" }).llm.provider).toBe("codex-cli");
  });
  test("bad values are refused with the key named", () => {
    const cases: [unknown, RegExp][] = [
      [{ llm: { provider: "claude" } }, /key "llm.provider" must be one of "openai", "claude-cli", "codex-cli", "gemini-cli"/],
      [{ llm: { provider: "claude-cli", command: "bin/claude" } }, /key "llm.command" must be an absolute path/],
      [{ llm: { dailyCap: 0 } }, /key "llm.dailyCap" must be a positive integer/],
      [{ llm: { dailyCap: 2.5 } }, /key "llm.dailyCap" must be a positive integer/],
      [{ llm: { cap: 3 } }, /unknown key "llm.cap"/],
    ];
    for (const [json, message] of cases) expect(() => loadConfig({ MEMSVC_HOME: homeWith(json) })).toThrow(message);
    expect(() => loadConfig({ MEMSVC_HOME: homeWith({}), MEMSVC_LLM_PROVIDER: "claude" })).toThrow(/MEMSVC_LLM_PROVIDER must be one of/);
  });
});

test("the state folder and counter file are private", async () => {
  await client("claude-cli").chatJson(MESSAGES);
  expect(statSync(stateDir).mode & 0o777).toBe(0o700);
  expect(statSync(join(stateDir, "llm-calls.json")).mode & 0o777).toBe(0o600);
});
