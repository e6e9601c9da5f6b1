import { beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { AppError } from "../../../src/errors";
import { createLlmClient } from "../../../src/llm/client";
import { CALLS_FILE, localDay, readCallCount, reserveCall } from "../../../src/llm/daily-cap";

const STANDINS = resolve(import.meta.dir, "../../fixtures/harness-cli");
let work: string;
let stateDir: string;

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), "cap-"));
  stateDir = join(work, "state");
});

const llm = (dailyCap: number) => ({
  provider: "claude-cli" as const,
  baseURL: null,
  apiKey: null,
  model: null,
  command: join(STANDINS, "claude"),
  dailyCap,
  timeoutMs: 10_000,
  contextChars: 60_000,
});
const ask = [{ role: "user" as const, content: 'Reply with exactly this JSON and nothing else: {"ok": true}' }];

describe("the daily cap on harness CLI calls", () => {
  test("the N+1-th call of a day is refused before the CLI runs, and the refusal says what to do", async () => {
    const saved = process.env.HARNESS_STANDIN_DIR;
    process.env.HARNESS_STANDIN_DIR = work;
    try {
      const client = createLlmClient(llm(3), stateDir)!;
      for (let i = 0; i < 3; i++) expect(await client.chatJson(ask)).toEqual({ ok: true });
      let error: unknown = null;
      await client.chatJson(ask).catch((e) => (error = e));
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("unavailable");
      expect((error as AppError).message).toMatch(/^daily cap of 3 calls to claude \(Claude Code\) reached \(\d{4}-\d\d-\d\d\); raise llm.dailyCap/);
      // The stand-in logs each run: three, not four.
      expect(readFileSync(join(work, "calls"), "utf8").trim().split("\n")).toHaveLength(3);
      // A failed call counts too: it ran and may have spent the allowance.
      process.env.HARNESS_STANDIN_MODE = "logged-out";
      const more = createLlmClient(llm(5), stateDir)!;
      await more.chatJson(ask).catch(() => {});
      expect(readCallCount(stateDir).calls).toBe(4);
    } finally {
      delete process.env.HARNESS_STANDIN_MODE;
      if (saved === undefined) delete process.env.HARNESS_STANDIN_DIR;
      else process.env.HARNESS_STANDIN_DIR = saved;
    }
  });

  test("the count survives a restart (a new client, as after a server restart) and is private", async () => {
    for (let i = 0; i < 2; i++) await reserveCall(stateDir, 2, "codex (Codex CLI)");
    const file = join(stateDir, CALLS_FILE);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ day: localDay(new Date()), calls: 2 });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // A fresh process sees the same count and refuses the third.
    const child = Bun.spawnSync([process.execPath, join(STANDINS, "reserve-calls.ts"), stateDir, "2", "1"], { env: process.env });
    expect(JSON.parse(child.stdout.toString())).toEqual({ granted: 0, refused: 1 });
  });

  test("a new local day starts from zero; yesterday's file is not today's", async () => {
    const file = join(stateDir, CALLS_FILE);
    await reserveCall(stateDir, 1, "gemini (Gemini CLI)", () => new Date(2026, 10, 27, 23, 59));
    await expect(reserveCall(stateDir, 1, "gemini (Gemini CLI)", () => new Date(2026, 10, 27, 23, 59, 30))).rejects.toThrow(/daily cap of 1 calls/);
    const next = await reserveCall(stateDir, 1, "gemini (Gemini CLI)", () => new Date(2026, 10, 28, 0, 0, 5));
    expect(next).toEqual({ day: "2026-11-28", calls: 1 });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ day: "2026-11-28", calls: 1 });
  });

  test("a hand-broken file starts today over instead of failing every call", async () => {
    await reserveCall(stateDir, 5, "claude (Claude Code)");
    writeFileSync(join(stateDir, CALLS_FILE), "{ not json");
    expect(await reserveCall(stateDir, 5, "claude (Claude Code)")).toMatchObject({ calls: 1 });
  });

  test("a lock left by a dead process is taken over", async () => {
    await reserveCall(stateDir, 5, "claude (Claude Code)");
    const dead = Bun.spawnSync(["true"]).pid;
    writeFileSync(join(stateDir, "llm-calls.lock"), String(dead));
    expect(await reserveCall(stateDir, 5, "claude (Claude Code)")).toMatchObject({ calls: 2 });
    expect(existsSync(join(stateDir, "llm-calls.lock"))).toBe(false);
  });

  test("two processes racing lose no count, and together never pass the cap", async () => {
    const run = (tries: number, cap: number) =>
      Bun.spawn([process.execPath, join(STANDINS, "reserve-calls.ts"), stateDir, String(cap), String(tries)], { env: process.env, stdout: "pipe" });
    // Under the cap: every reservation of both is counted.
    const [a, b] = [run(150, 1000), run(150, 1000)];
    const results = await Promise.all([a, b].map(async (p) => JSON.parse(await new Response(p.stdout).text())));
    expect(results.map((r) => r.granted)).toEqual([150, 150]);
    expect(readCallCount(stateDir).calls).toBe(300);
    // Racing at the cap: exactly the remainder is granted, however it splits.
    const [c, d] = [run(100, 350), run(100, 350)];
    const capped = await Promise.all([c, d].map(async (p) => JSON.parse(await new Response(p.stdout).text())));
    expect(capped[0].granted + capped[1].granted).toBe(50);
    expect(capped[0].refused + capped[1].refused).toBe(150);
    expect(readCallCount(stateDir).calls).toBe(350);
  });
});
