import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { memoriesReply, startFakeLlm, type FakeLlm } from "../helpers/fake-llm";
import { freePort, ROOT } from "../helpers/process";

/**
 * The README's quick start, run as written (doc test): every command of the
 * sh blocks under "## Install", "## Set up" and "## A five-minute tour",
 * one after the other, in one fresh HOME, the way a new user pastes them.
 *
 * Two things differ from a real laptop, both said here:
 * - the release download (`curl ... | sh` from GitHub) cannot run without
 *   the internet; it is listed in NOT_HERE and reported, never passed;
 * - the server's port is a free one (CI runs two suites side by side, and a
 *   developer's own memsvc may hold 8787): config.json names it before setup
 *   runs, as a user with a port of their own would, and `127.0.0.1:8787` in
 *   the commands is replaced by it.
 * The answers to setup's questions are piped, a "y" per question.
 */
const NOT_HERE: { pattern: RegExp; why: string }[] = [
  { pattern: /^curl -fsSL https:\/\/github\.com\/.*\| sh$/, why: "downloads the latest release from GitHub: no internet on this machine" },
];

const README = readFileSync(join(ROOT, "README.md"), "utf8");

/** The commands of every ```sh block under `## <heading>`: comments dropped, `\` continuations joined. */
export function shCommands(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no "## ${heading}" section`);
  const end = markdown.indexOf("\n## ", start + 4);
  const section = markdown.slice(start, end < 0 ? undefined : end);
  const commands: string[] = [];
  for (const block of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    let pending = "";
    for (const raw of block[1]!.split("\n")) {
      const line = raw.trimEnd();
      if (pending === "" && (line.trim() === "" || line.trim().startsWith("#"))) continue;
      if (line.endsWith("\\")) {
        pending += `${line.slice(0, -1)}`;
        continue;
      }
      // A trailing comment after two spaces (`memsvc setup        # asks ...`) is the README's note, not the command's.
      commands.push((pending + line).replace(/\s{2,}#[^'"]*$/, "").trim());
      pending = "";
    }
  }
  return commands;
}

let home: string;
let fake: FakeLlm;
let port: number;
const transcript: string[] = [];
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "memsvc-readme-"));
  mkdirSync(join(home, ".claude"));
  const stand = join(home, "stand-ins");
  mkdirSync(stand);
  // A container's systemctl: no user bus. Setup then writes the unit and starts the server detached.
  writeFileSync(join(stand, "systemctl"), '#!/bin/sh\necho "Failed to connect to bus: No medium found" >&2\nexit 1\n');
  chmodSync(join(stand, "systemctl"), 0o755);
  fake = startFakeLlm();
  fake.fallback = () => memoriesReply("The orders service retries webhooks 5 times with exponential backoff.");
  port = await freePort();
  mkdirSync(join(home, ".memsvc"), { mode: 0o700 });
  writeFileSync(join(home, ".memsvc", "config.json"), `${JSON.stringify({ port })}\n`, { mode: 0o600 });
});
afterAll(async () => {
  try {
    process.kill(JSON.parse(readFileSync(join(home, ".memsvc", "server.json"), "utf8")).pid, "SIGKILL");
  } catch {
    /* not running */
  }
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
  if (transcript.length) console.log(`README quick start as run:\n${transcript.join("\n")}`);
});

async function sh(command: string, stdin = "") {
  const env: Record<string, string> = {
    HOME: home,
    PATH: `${join(home, ".local", "bin")}:${join(home, "stand-ins")}:${join(ROOT, "node_modules", ".bin")}:/usr/local/bin:/usr/bin:/bin`,
    // npm's cache stays the machine's: a fresh HOME would make `npm install` fetch every package again.
    npm_config_cache: process.env.npm_config_cache ?? join(homedir(), ".npm"),
    MEMSVC_OFFLINE: "1",
    OPENAI_BASE_URL: fake.baseURL,
    OPENAI_API_KEY: "sk-readme-test",
    OPENAI_MODEL: "fake-model",
    LANG: "C.UTF-8",
  };
  const run = command.replaceAll("127.0.0.1:8787", `127.0.0.1:${port}`);
  const p = Bun.spawn(["sh", "-c", run], { cwd: ROOT, env, stdin: new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill("SIGKILL"), 240_000);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  transcript.push(`$ ${command}\n  -> exit ${code}`);
  return { code, stdout, stderr, all: `${stdout}\n${stderr}` };
}

describe("README quick start (doc test)", () => {
  test("the sections hold commands", () => {
    expect(shCommands(README, "Install").length).toBeGreaterThan(0);
    expect(shCommands(README, "Set up")).toContain("memsvc setup");
    expect(shCommands(README, "A five-minute tour").length).toBeGreaterThanOrEqual(4);
  });

  test("Install: every command that can run here installs memsvc from the checkout", async () => {
    for (const command of shCommands(README, "Install")) {
      const skip = NOT_HERE.find((n) => n.pattern.test(command));
      if (skip) {
        transcript.push(`$ ${command}\n  -> not run: ${skip.why}`);
        continue;
      }
      const r = await sh(command);
      expect(r.code, `${command}\n${r.all}`).toBe(0);
    }
    expect(existsSync(join(home, ".local", "bin", "memsvc"))).toBe(true);
    // Every command in the section either ran or is listed above with its reason.
    expect(transcript.length).toBe(shCommands(README, "Install").length);
  }, 600_000);

  test("Set up: `memsvc setup`, answered yes, ends with a server and a model", async () => {
    for (const command of shCommands(README, "Set up")) {
      const r = await sh(command, "y\n".repeat(20));
      expect(r.code, `${command}\n${r.all}`).toBe(0);
      expect(r.stdout).toContain("answered a test call");
    }
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
  }, 300_000);

  test("A five-minute tour: each command succeeds and shows what the README says", async () => {
    const outputs: string[] = [];
    for (const command of shCommands(README, "A five-minute tour")) {
      const r = await sh(command);
      expect(r.code, `${command}\n${r.all}`).toBe(0);
      outputs.push(r.stdout);
    }
    const all = outputs.join("\n");
    expect(all).toContain("retries webhooks 5 times");
    expect(all).toContain("## Memory recall (auto)");
  }, 300_000);
});
