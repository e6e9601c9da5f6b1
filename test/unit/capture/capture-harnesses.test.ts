import { describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { denoise } from "../../../src/capture/denoise";
import { flatDir, flatten } from "../../../src/capture/flatten";
import { discover, sourceAgentFor } from "../../../src/capture/harnesses";
import { readCodexLine } from "../../../src/capture/reader-codex";
import { readGeminiSession } from "../../../src/capture/reader-gemini";
import { opencodeSessionFiles, readOpencodeSession } from "../../../src/capture/reader-opencode";
import { planTranscript } from "../../../src/capture/run";
import { detectFormat, readJsonl } from "../../../src/capture/transcript";

const ROOT = resolve(import.meta.dir, "../../..");
const CODEX = join(ROOT, "test/fixtures/codex/rollout-2026-03-02T09-14-05-0197a1c2-5d4e-7f00-9b1a-3c2d4e5f6a7b.jsonl");
const GEMINI_TMP = join(ROOT, "test/fixtures/gemini/tmp");
const GEMINI = join(GEMINI_TMP, "billing-api/chats/session-2026-03-03T10-02-7c1e9a4b.json");
const OPENCODE = join(ROOT, "test/fixtures/opencode/storage");
const tmp = () => mkdtempSync(join(tmpdir(), "memsvc-harness-"));
const textOf = (parts: Parameters<typeof denoise>[0]) =>
  denoise(parts)
    .map((m) => `${m.role}: ${m.content}`)
    .join("\n");

describe("Codex CLI rollout reader", () => {
  const { lines, size } = readJsonl(CODEX, readCodexLine);
  const text = textOf(lines.flatMap((l) => l.parts));

  test("is recognised and read line by line with session id and working directory", () => {
    expect(detectFormat(readFileSync(CODEX, "utf8"))).toBe("codex");
    expect(lines.at(-1)!.end).toBe(size);
    expect(lines[0].sessionId).toBe("0197a1c2-5d4e-7f00-9b1a-3c2d4e5f6a7b");
    expect(lines[0].cwd).toBe("/home/dana/src/billing-api");
  });

  test("keeps the user's and the agent's words once each (event_msg duplicates skipped)", () => {
    expect(text).toContain("user: Invoices over 10k EUR fail to sync to the ledger with a 422.");
    expect(text).toContain("assistant: The ledger schema caps `amount` at 999999 minor units");
    expect(text).toContain("credit notes always go through /refunds");
    expect(text.split("The ledger schema caps").length).toBe(2);
  });

  test("drops AGENTS.md, environment context and reasoning", () => {
    for (const gone of ["AGENTS.md instructions", "<environment_context>", "sandbox_mode", "Looking for the ledger client", "gAAAAAB", "token_count"])
      expect(text).not.toContain(gone);
  });

  test("tool calls are one-line summaries; exit codes mark errors", () => {
    expect(text).toContain("[shell] bash -lc rg -n 'amount' src/ledger/");
    expect(text).toContain("[apply_patch] *** Begin Patch");
    expect(text).toContain("[result] src/ledger/client.ts:41");
    expect(text).toContain("[error] FAIL test/ledger.test.ts > rejects negative amounts");
    expect(text).not.toContain("duration_seconds");
  });

  test("secrets are redacted before anything leaves the machine", () => {
    expect(text).not.toContain("sk_live_51HxQz8Kp2mN4vR7tY9wB3cD5eF6gH8jK0lM2nP4qS6uV8xZ");
    expect(text).toContain("[REDACTED");
  });

  test("segments: contiguous, under the limit, the session's own id and project", () => {
    const plan = planTranscript(CODEX, "codex", null, 400);
    expect(plan.segments.length).toBeGreaterThan(2);
    expect(plan.sessionId).toBe("0197a1c2-5d4e-7f00-9b1a-3c2d4e5f6a7b");
    expect(plan.project).toBe("billing-api");
    for (let i = 1; i < plan.segments.length; i++) expect(plan.segments[i].start).toBe(plan.segments[i - 1].end);
    expect(plan.segments[0].date).toBe("2026-03-02T09:14:11.402Z");
    expect(plan.tailEnd).toBe(size);
  });
});

describe("Gemini CLI chat reader", () => {
  const session = readGeminiSession(GEMINI)!;
  const text = textOf(session.messages.flatMap((m) => m.parts));

  test("session id, project folder from .project_root, one flat message per recorded message", () => {
    expect(session.sessionId).toBe("7c1e9a4b-2f3d-4e5a-9b8c-1d2e3f4a5b6c");
    expect(session.cwd).toBe("/home/dana/src/billing-api");
    expect(session.messages.map((m) => m.key)).toHaveLength(7);
  });

  test("keeps words (string and parts content), tool calls and their results; drops notices, slash commands, thoughts", () => {
    expect(text).toContain("user: The nightly export to the data warehouse has been timing out since Monday.");
    expect(text).toContain("Adding an index on invoices(created_at)");
    expect(text).toContain("Do it with a migration, and keep the page size in config.");
    expect(text).toContain("[read_file] /home/dana/src/billing-api/jobs/export.ts");
    expect(text).toContain("[run_shell_command] psql");
    expect(text).toContain("[result] Command: psql");
    expect(text).toContain("[error] Permission denied: migrations/ is read-only");
    for (const gone of ["Request cancelled.", "/chat save", "Read the job, then its query plan", "9304"]) expect(text).not.toContain(gone);
  });

  test("secrets are redacted", () => {
    expect(text).not.toContain("Xk9#mQ2vL7pR");
  });

  test("a message whose tool call is still running waits for the next run", () => {
    const doc = JSON.parse(readFileSync(GEMINI, "utf8"));
    doc.messages.push({
      id: "late",
      timestamp: "2026-03-03T10:07:00.000Z",
      type: "gemini",
      content: "",
      toolCalls: [{ id: "t", name: "run_shell_command", args: { command: "make" }, status: "executing" }],
    });
    const file = join(tmp(), "session-x.json");
    writeFileSync(file, JSON.stringify(doc));
    expect(readGeminiSession(file)!.messages).toHaveLength(7);
    writeFileSync(file, '{"sessionId": "half-writ');
    expect(readGeminiSession(file)).toBeNull();
  });
});

describe("opencode storage reader", () => {
  const files = opencodeSessionFiles(OPENCODE);
  const main = files.find((f) => f.endsWith("ses_5a1b2c3d4ffeAbCdEfGhIjKl.json"))!;
  const session = readOpencodeSession(OPENCODE, main)!;
  const text = textOf(session.messages.flatMap((m) => m.parts));

  test("sub-agent sessions are skipped; the session's directory is its project", () => {
    expect(files).toHaveLength(2);
    expect(readOpencodeSession(OPENCODE, files.find((f) => f.includes("SubAgent"))!)).toBeNull();
    expect(session.cwd).toBe("/home/dana/src/web-shop");
  });

  test("messages in id order; the still-streaming assistant message waits", () => {
    expect(session.messages.map((m) => m.key)).toEqual(["msg_5a1b2c3d5001AaAaAaAaAaAa", "msg_5a1b2c3d6002BbBbBbBbBbBb", "msg_5a1b2c3d7003CcCcCcCcCcCc"]);
    expect(text).not.toContain("Looking at the refund te");
    expect(session.messages[0].timestamp).toBe(new Date(1772618400000).toISOString());
  });

  test("keeps words and tool calls; drops synthetic text, reasoning and step markers", () => {
    expect(text).toContain('user: The checkout e2e test fails about one run in five with "element not attached".');
    expect(text).toContain("assistant: The pay button is re-rendered when the cart total arrives");
    expect(text).toContain("[bash] npx playwright test tests/checkout.spec.ts --repeat-each 10");
    expect(text).toContain("[result] 2 failed");
    expect(text).toContain("[error] oldString not found in content");
    expect(text).toContain("Also wait for the total in the refund test.");
    for (const gone of ["Called the Read tool", "re-renders after the cart total loads", "9f1e2d3c4b5a", "0.0121"]) expect(text).not.toContain(gone);
  });
});

describe("flat copies of rewritten-in-place sessions", () => {
  test("new messages are appended, earlier bytes never change, so the watermark stays valid; a rewound history starts over", () => {
    const state = tmp();
    const gemini = join(tmp(), "chats");
    cpSync(join(GEMINI_TMP, "billing-api"), join(gemini, ".."), { recursive: true });
    const file = join(gemini, "session-2026-03-03T10-02-7c1e9a4b.json");
    const flat = flatten(flatDir(state), readGeminiSession(file)!);
    expect(statSync(flat).mode & 0o777).toBe(0o600);
    const before = readFileSync(flat, "utf8");
    const first = planTranscript(flat, "flat", null);
    expect(first.sessionId).toBe("7c1e9a4b-2f3d-4e5a-9b8c-1d2e3f4a5b6c");
    expect(first.project).toBe("billing-api");

    // The CLI rewrites the whole JSON with one more message.
    const doc = JSON.parse(readFileSync(file, "utf8"));
    doc.messages.push({ id: "c0a1b2c3-0008", timestamp: "2026-03-03T10:08:00.000Z", type: "user", content: "Ship it behind the EXPORT_PAGED flag." });
    writeFileSync(file, JSON.stringify(doc, null, 2));
    expect(flatten(flatDir(state), readGeminiSession(file)!)).toBe(flat);
    const after = readFileSync(flat, "utf8");
    expect(after.startsWith(before)).toBe(true);
    const delta = planTranscript(flat, "flat", {
      file: flat,
      sessionId: first.sessionId,
      project: first.project,
      offset: first.tailEnd,
      pending: [],
      updatedAt: "",
    });
    expect(delta.segments.map((s) => s.messages.map((m) => m.content).join())).toEqual(["Ship it behind the EXPORT_PAGED flag."]);

    doc.messages = doc.messages.slice(0, 2);
    writeFileSync(file, JSON.stringify(doc));
    flatten(flatDir(state), readGeminiSession(file)!);
    expect(readFileSync(flat, "utf8").split("\n").filter(Boolean)).toHaveLength(2);
  });
});

describe("discovery and provenance", () => {
  test("each harness's sessions are found under its folder", () => {
    const codexRoot = join(tmp(), "sessions");
    cpSync(CODEX, join(codexRoot, "2026/03/02", CODEX.replace(/^.*[\\/]/, "")));
    writeFileSync(join(codexRoot, "2026/03/02/notes.jsonl"), "{}\n");
    const state = tmp();
    expect(discover("codex", codexRoot, state).map((f) => [f.format, f.path.endsWith("0197a1c2-5d4e-7f00-9b1a-3c2d4e5f6a7b.jsonl")])).toEqual([
      ["codex", true],
    ]);
    const gemini = discover("gemini", GEMINI_TMP, state);
    expect(gemini.map((f) => f.format)).toEqual(["flat"]);
    expect(gemini[0].path.startsWith(flatDir(state))).toBe(true);
    expect(discover("opencode", OPENCODE, state).map((f) => f.path.replace(/^.*[\\/]/, ""))).toEqual(["opencode-ses_5a1b2c3d4ffeAbCdEfGhIjKl.jsonl"]);
    expect(discover("claude", join(tmp(), "missing"), state)).toEqual([]);
  });

  test("source_agent: the harness unless config.json names the agent", () => {
    expect(sourceAgentFor({ sourceAgent: hostname() }, "codex")).toBe("codex-cli");
    expect(sourceAgentFor({ sourceAgent: hostname() }, "gemini")).toBe("gemini-cli");
    expect(sourceAgentFor({ sourceAgent: hostname() }, "claude")).toBe("claude-code");
    expect(sourceAgentFor({ sourceAgent: "dana-laptop" }, "opencode")).toBe("dana-laptop");
    expect(sourceAgentFor({ sourceAgent: hostname() }, null)).toBe(hostname());
  });
});
