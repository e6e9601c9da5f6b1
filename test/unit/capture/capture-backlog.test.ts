import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { backlogFile, backlogSummary, readBacklog } from "../../../src/capture/backlog";
import { capture } from "../../../src/capture/run";
import { loadConfig } from "../../../src/config";

const ROOT = resolve(import.meta.dir, "../../..");
const GENERIC = join(ROOT, "test/fixtures/generic/session.jsonl");

/** A /distill that answers as the server does without a model (503), or stores (201), as the test says. */
let mode: "no-model" | "ok" | "model-down" = "no-model";
const posted: string[] = [];
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const body = (await req.json()) as { session_id: string; segment_id: string };
    if (mode === "no-model")
      return Response.json(
        { error: { code: "unavailable", message: "no language model is configured, so /distill cannot run: set llm.baseURL ..." } },
        { status: 503 },
      );
    if (mode === "model-down")
      return Response.json({ error: { code: "unavailable", message: "the language model at http://x is unreachable" } }, { status: 503 });
    posted.push(`${body.session_id}#${body.segment_id}`);
    return Response.json({ ids: [crypto.randomUUID()], distilled: 1, dropped: [] }, { status: 201 });
  },
});
afterAll(() => server.stop(true));

function setup() {
  const home = mkdtempSync(join(tmpdir(), "memsvc-backlog-"));
  const a = join(home, "a.jsonl");
  const b = join(home, "b.jsonl");
  copyFileSync(GENERIC, a);
  copyFileSync(GENERIC, b);
  const config = loadConfig({ MEMSVC_HOME: home, MEMSVC_URL: server.url.origin });
  return { home, a, b, config };
}

describe("capture backlog: which sessions wait, and why", () => {
  test("a 503 without a model leaves the failed session and the untried ones waiting for a model; a later run empties it", async () => {
    const { home, a, b, config } = setup();
    mode = "no-model";
    const first = await capture({
      config,
      transcripts: [
        { path: a, format: "generic" },
        { path: b, format: "generic" },
      ],
    });
    expect(first.failed).toBe(true);
    const waiting = readBacklog(home);
    expect(waiting.sessions.map((s) => s.file).sort()).toEqual([a, b].sort());
    expect(backlogSummary(waiting)).toEqual({ total: 2, noModel: 2, modelFailed: 0, noServer: 0 });
    expect(statSync(backlogFile(home)).mode & 0o777).toBe(0o600);
    const since = waiting.sessions[0]!.since;

    // Still no model: the same two wait, since their first failure.
    await capture({ config, transcripts: waiting.sessions.map((s) => ({ path: s.file, format: "generic" as const })) });
    expect(readBacklog(home).sessions[0]!.since).toBe(since);

    mode = "ok";
    const second = await capture({ config, transcripts: readBacklog(home).sessions.map((s) => ({ path: s.file, format: "generic" as const })) });
    expect(second.failed).toBe(false);
    expect(readBacklog(home).sessions).toEqual([]);
    expect(posted.length).toBeGreaterThanOrEqual(2);
    rmSync(home, { recursive: true, force: true });
  });

  test("a failing model and a missing server are told apart from a missing model", async () => {
    const { home, a, config } = setup();
    mode = "model-down";
    await capture({ config, transcripts: [{ path: a, format: "generic" }] });
    expect(backlogSummary(readBacklog(home))).toMatchObject({ total: 1, modelFailed: 1 });
    const offline = loadConfig({ MEMSVC_HOME: home, MEMSVC_URL: "http://127.0.0.1:1" });
    await capture({ config: offline, transcripts: [{ path: a, format: "generic" }] });
    expect(backlogSummary(readBacklog(home))).toMatchObject({ total: 1, noServer: 1 });
    // A transcript deleted meanwhile waits for nothing.
    rmSync(a);
    expect(readBacklog(home).sessions).toEqual([]);
    rmSync(home, { recursive: true, force: true });
  });
});
