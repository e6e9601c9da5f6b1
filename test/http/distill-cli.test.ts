import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readCallCount } from "../../src/llm/daily-cap";
import { TRANSCRIPT } from "../helpers/distill-server";
import { dbRows } from "../helpers/engine";
import { postJson, startServer, type TestServer } from "../helpers/server";

/**
 * A real server whose language model is a harness CLI (llm.provider
 * "claude-cli", llm.command the stand-in script): /distill, /health and
 * /health/llm as a user of a Claude subscription would meet them.
 */

const CLAUDE = resolve(import.meta.dir, "../fixtures/harness-cli/claude");
const SECRET = `sk-proj-${"CliDistill0Secret".repeat(2)}`;
let srv: TestServer;
let work: string;
const saved = process.env.HARNESS_STANDIN_DIR;

beforeAll(async () => {
  srv = await startServer({ config: { llm: { provider: "claude-cli", command: CLAUDE, model: "sonnet", dailyCap: 3, timeoutMs: 5_000 } } });
});
afterAll(async () => {
  await srv.stop();
  if (saved === undefined) delete process.env.HARNESS_STANDIN_DIR;
  else process.env.HARNESS_STANDIN_DIR = saved;
});
beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), "standin-"));
  process.env.HARNESS_STANDIN_DIR = work;
});
afterEach(() => {
  delete process.env.HARNESS_STANDIN_MODE;
});

describe("/distill with llm.provider claude-cli", () => {
  test("201: the CLI's answer is stored as memories; the prompt went on its stdin, redacted", async () => {
    writeFileSync(
      join(work, "reply.txt"),
      JSON.stringify({
        memories: [
          {
            content: "Migrations on the orders table need lock_timeout = 5s, or the staging deploy blocks for minutes.",
            memory_type: "learnings",
            tags: ["postgres", "deploy"],
          },
        ],
      }),
    );
    const r = await postJson(`${srv.url}/distill`, { text: `${TRANSCRIPT}\n\nuser: the staging key is ${SECRET}`, session_id: "cli-1", project: "shop" });
    expect(r.status).toBe(201);
    const j = (await r.json()) as any;
    expect(j).toEqual({ ids: [expect.any(String)], distilled: 1, dropped: [] });
    const m = (await (await fetch(`${srv.url}/memory?id=${j.ids[0]}`)).json()) as any;
    expect(m.memory).toMatchObject({ memory_type: "learnings", project: "shop", source_session: "cli-1" });
    expect(m.memory.content).toContain("lock_timeout = 5s");
    const argv = readFileSync(join(work, "argv"), "utf8").split("\n");
    expect(argv.slice(0, 2)).toEqual(["-p", "--output-format"]);
    expect(argv).toContain("sonnet");
    const input = readFileSync(join(work, "stdin"), "utf8");
    expect(input).toContain("You distil the working session of a software agent");
    expect(input).toContain("lock_timeout = 5s");
    expect(input).not.toContain(SECRET);
    expect(readCallCount(srv.services.config.paths.state).calls).toBe(1);
  });

  test("/health names the CLI; /health/llm probes it (one call)", async () => {
    const h = (await (await fetch(`${srv.url}/health`)).json()) as any;
    expect(h.llm).toBe("claude-cli (Claude Code headless, subscription) sonnet");
    const before = readCallCount(srv.services.config.paths.state).calls;
    const p = (await (await fetch(`${srv.url}/health/llm`)).json()) as any;
    expect(p).toMatchObject({ configured: true, ok: true, llm: "claude-cli (Claude Code headless, subscription) sonnet", error: null });
    expect(readCallCount(srv.services.config.paths.state).calls).toBe(before + 1);
  });

  test("503 when the CLI is logged out, and 503 naming the cap once it is spent; nothing stored", async () => {
    process.env.HARNESS_STANDIN_MODE = "logged-out";
    const out = await postJson(`${srv.url}/distill`, { text: TRANSCRIPT, session_id: "cli-2", segment_id: "1" });
    expect(out.status).toBe(503);
    expect(((await out.json()) as any).error).toEqual({
      code: "unavailable",
      message: "claude (Claude Code) is not logged in: run `claude` in a terminal once and log in (or `claude auth login`)",
    });
    // Three calls so far (distill, probe, this one): the cap of 3 is spent.
    delete process.env.HARNESS_STANDIN_MODE;
    const capped = await postJson(`${srv.url}/distill`, { text: TRANSCRIPT, session_id: "cli-2", segment_id: "1" });
    expect(capped.status).toBe(503);
    expect(((await capped.json()) as any).error.message).toMatch(/^daily cap of 3 calls to claude \(Claude Code\) reached/);
    expect(await dbRows(srv.services, "SELECT id FROM memories WHERE source_session = ?", ["cli-2"])).toEqual([]);
    expect((await dbRows<{ n: number }>(srv.services, "SELECT count(*) AS n FROM memories"))[0].n).toBe(1);
  });
});
