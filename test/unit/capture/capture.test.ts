import { describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { denoise, messageChars } from "../../../src/capture/denoise";
import { readClaudeLine, readGenericLine } from "../../../src/capture/readers";
import { findTranscripts, planTranscript } from "../../../src/capture/run";
import { planSegments } from "../../../src/capture/segments";
import { detectFormat, readJsonl } from "../../../src/capture/transcript";
import { acquireLock } from "../../../src/capture/watermark";

const ROOT = resolve(import.meta.dir, "../../..");
const FIXTURE = join(ROOT, "test/fixtures/claude-code/orders-migration.jsonl");
const tmp = () => mkdtempSync(join(tmpdir(), "memsvc-cap-"));

describe("Claude Code reader and denoiser", () => {
  const { lines, size } = readJsonl(FIXTURE, readClaudeLine);
  const messages = denoise(lines.flatMap((l) => l.parts));
  const text = messages.map((m) => m.content).join("\n");

  test("every line is read, with its end offset", () => {
    expect(lines.length).toBe(readFileSync(FIXTURE, "utf8").trim().split("\n").length);
    expect(lines.at(-1)!.end).toBe(size);
    expect(lines[1].sessionId).toBe("5f2c8a1e-7b3d-4c19-a0e4-9d61b2f38c57");
    expect(lines[1].cwd).toBe("/home/dana/src/shop-api");
  });

  test("keeps human and agent words", () => {
    expect(text).toContain("The staging deploy hangs on the orders migration again (deploy #418)");
    expect(text).toContain("Found it. The nightly export cron");
    expect(text).toContain("All 41 migration tests pass.");
  });

  test("drops harness noise: meta lines, slash commands, thinking, interruptions, bookkeeping tools", () => {
    for (const gone of [
      "Caveat: The messages below",
      "<command-name>",
      "local-command-stdout",
      "I should look at the job logs first",
      "Request interrupted",
      "TodoWrite",
      "Todos have been modified",
    ]) {
      expect(text).not.toContain(gone);
    }
  });

  test("tool calls become one-line summaries; bulk input and output are cut", () => {
    expect(text).toContain("[Bash] kubectl -n shop-staging logs job/migrate-418 --tail=400");
    expect(text).toContain("[Edit] /home/dana/src/shop-api/db/migrate.ts");
    expect(text).not.toContain("old_string");
    expect(text).toMatch(/\[result\] [\s\S]{0,400}chars cut\]/);
    expect(text).not.toContain("migration 0030 applies and rolls back");
    // A failed tool keeps more of its output: the error is the lesson.
    expect(text).toContain("[error] > shop-api@3.8.1 test");
  });

  test("secrets are redacted before anything leaves the machine", () => {
    expect(text).not.toContain("Xk9-Planted-Staging-pw");
    expect(text).toContain("postgres://shop_app:[REDACTED:password]@db.staging.internal:6432/shop");
  });

  test("reduces the transcript by more than half", () => {
    expect(JSON.stringify(messages).length).toBeLessThan(size / 2);
  });

  test("sub-agent sidechains are skipped", () => {
    const stripe = readJsonl(join(ROOT, "test/fixtures/claude-code/stripe-webhooks.jsonl"), readClaudeLine).lines;
    expect(
      denoise(stripe.flatMap((l) => l.parts))
        .map((m) => m.content)
        .join("\n"),
    ).not.toContain("Sub-agent scratch notes");
  });
});

describe("generic reader", () => {
  test("roles map to words and tool output; system prompts are dropped; text blocks are read", () => {
    const file = join(ROOT, "test/fixtures/generic/session.jsonl");
    expect(detectFormat(readFileSync(file, "utf8"))).toBe("generic");
    expect(detectFormat(readFileSync(FIXTURE, "utf8"))).toBe("claude");
    const msgs = denoise(readJsonl(file, readGenericLine).lines.flatMap((l) => l.parts));
    expect(msgs.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect(msgs[3].content).toContain("asciifolding");
    expect(msgs.some((m) => m.content.includes("You are a coding assistant"))).toBe(false);
  });
});

describe("segments and watermarks", () => {
  test("a long delta is split on line boundaries into contiguous segments under the limit", () => {
    const { lines } = readJsonl(FIXTURE, readClaudeLine);
    const { segments, tailEnd } = planSegments(lines, 0, 1200);
    expect(segments.length).toBeGreaterThan(3);
    expect(segments[0].start).toBe(0);
    for (let i = 1; i < segments.length; i++) expect(segments[i].start).toBe(segments[i - 1].end);
    expect(segments.at(-1)!.end).toBe(tailEnd);
    for (const s of segments) expect(messageChars(s.messages)).toBeLessThanOrEqual(1200);
    const ends = new Set(lines.map((l) => l.end));
    for (const s of segments) expect(ends.has(s.end)).toBe(true);
    // Each segment is dated from its own first line, and ids are distinct.
    expect(new Set(segments.map((s) => s.date)).size).toBe(segments.length);
    expect(new Set(segments.map((s) => s.id)).size).toBe(segments.length);
  });

  test("a half-written last line is left for the next run", () => {
    const dir = tmp();
    const file = join(dir, "s.jsonl");
    copyFileSync(FIXTURE, file);
    const full = statSync(file).size;
    appendFileSync(file, '{"type":"user","message":{"role":"user","content":"half');
    const { lines } = readJsonl(file, readClaudeLine);
    expect(lines.at(-1)!.end).toBe(full);
  });

  test("pending segments are resent with the same boundaries and id, even after the file grew", () => {
    const dir = tmp();
    const file = join(dir, "s.jsonl");
    copyFileSync(FIXTURE, file);
    const first = planTranscript(file, "claude", null);
    expect(first.segments).toHaveLength(1);
    const seg = first.segments[0];
    appendFileSync(
      file,
      `${JSON.stringify({ type: "user", sessionId: first.sessionId, cwd: "/x/shop-api", timestamp: "2026-03-15T10:00:00Z", message: { role: "user", content: "One more durable fact about the orders export schedule." } })}\n`,
    );
    const state = {
      file,
      sessionId: first.sessionId,
      project: first.project,
      offset: 0,
      pending: [{ start: seg.start, end: seg.end, id: seg.id }],
      updatedAt: "",
    };
    const again = planTranscript(file, "claude", state);
    expect(again.segments).toHaveLength(2);
    expect(again.segments[0]).toMatchObject({ start: seg.start, end: seg.end, id: seg.id });
    expect(again.segments[0].messages).toEqual(seg.messages);
    expect(again.segments[1].start).toBe(seg.end);
    expect(again.segments[1].messages[0].content).toContain("One more durable fact");
    // Without the plan, a fresh read would have made one bigger segment with another id.
    expect(planTranscript(file, "claude", null).segments[0].id).not.toBe(seg.id);
  });

  test("a transcript shorter than its watermark (rewritten) is read from the start", () => {
    const dir = tmp();
    const file = join(dir, "s.jsonl");
    writeFileSync(file, `${JSON.stringify({ role: "user", content: "The build cache lives in /var/cache/ci and is wiped every Sunday." })}\n`);
    const plan = planTranscript(file, "generic", { file, sessionId: "x", project: null, offset: 99_999, pending: [], updatedAt: "" });
    expect(plan.offset).toBe(0);
    expect(plan.segments).toHaveLength(1);
  });

  test("findTranscripts lists <dir>/<project>/*.jsonl oldest first", () => {
    const dir = tmp();
    const a = join(dir, "-home-dana-a");
    const b = join(dir, "-home-dana-b");
    for (const d of [a, b]) require("node:fs").mkdirSync(d);
    writeFileSync(join(b, "2.jsonl"), "");
    writeFileSync(join(a, "notes.txt"), "");
    writeFileSync(join(a, "1.jsonl"), "");
    require("node:fs").utimesSync(join(b, "2.jsonl"), new Date(2000, 1, 1), new Date(2000, 1, 1));
    expect(findTranscripts(dir)).toEqual([join(b, "2.jsonl"), join(a, "1.jsonl")]);
    expect(findTranscripts(join(dir, "missing"))).toEqual([]);
  });

  test("one capture at a time per home; a stale lock of a dead process is taken over", () => {
    const dir = tmp();
    const release = acquireLock(dir)!;
    expect(release).toBeFunction();
    expect(acquireLock(dir)).toBeNull();
    release();
    writeFileSync(join(dir, "capture.lock"), "999999999");
    const again = acquireLock(dir);
    expect(again).toBeFunction();
    again!();
  });
});
