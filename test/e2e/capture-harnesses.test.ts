import { afterAll, beforeAll, expect, test } from "bun:test";
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { memoriesReply, startFakeLlm, type FakeLlm } from "../helpers/fake-llm";
import { dbRows } from "../helpers/engine";
import { startServer, type TestServer } from "../helpers/server";

// A developer who uses all four harnesses on one machine: `memsvc capture` with no flags finds
// every session where each harness keeps it, and each memory says which harness it came from.
const ROOT = resolve(import.meta.dir, "../..");
const FIX = join(ROOT, "test/fixtures");
const CODEX_NAME = "rollout-2026-03-02T09-14-05-0197a1c2-5d4e-7f00-9b1a-3c2d4e5f6a7b.jsonl";

let fake: FakeLlm;
let srv: TestServer;
let clientHome: string;
let userHome: string;

beforeAll(async () => {
  fake = startFakeLlm();
  srv = await startServer({ config: { llm: { baseURL: fake.baseURL, model: "fake-distiller", timeoutMs: 5000 } } });
  clientHome = mkdtempSync(join(tmpdir(), "memsvc-client-"));
  writeFileSync(join(clientHome, "config.json"), JSON.stringify({})); // no sourceAgent: the harness names itself
  userHome = mkdtempSync(join(tmpdir(), "memsvc-user-"));
  cpSync(
    join(FIX, "claude-code/orders-migration.jsonl"),
    join(userHome, ".claude/projects/-home-dana-src-shop-api/5f2c8a1e-7b3d-4c19-a0e4-9d61b2f38c57.jsonl"),
  );
  cpSync(join(FIX, "codex", CODEX_NAME), join(userHome, ".codex/sessions/2026/03/02", CODEX_NAME));
  cpSync(join(FIX, "gemini/tmp"), join(userHome, ".gemini/tmp"), { recursive: true });
  cpSync(join(FIX, "opencode/storage"), join(userHome, ".local/share/opencode/storage"), { recursive: true });
});
afterAll(async () => {
  await srv?.stop();
  await fake.stop();
});

async function capture(...args: string[]) {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("MEMSVC_") && k !== "CODEX_HOME" && k !== "XDG_DATA_HOME") env[k] = v;
  const p = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "capture", ...args], {
    cwd: ROOT,
    env: { ...env, HOME: userHome, MEMSVC_HOME: clientHome, MEMSVC_URL: srv.url },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, out, err };
}

const rows = () =>
  dbRows<{ source_agent: string; source_session: string; project: string; content: string }>(
    srv.services,
    "SELECT source_agent, source_session, project, content FROM memories ORDER BY seq",
  );

test("capture finds every harness by default; --harness selects one; watermarks hold per session", async () => {
  // One memory per request, named after the session the prompt came from.
  fake.fallback = (req) => {
    const raw = req.raw;
    const which = raw.includes("ledger")
      ? "codex ledger cap"
      : raw.includes("warehouse")
        ? "gemini export index"
        : raw.includes("checkout")
          ? "opencode checkout wait"
          : "claude orders migration";
    return memoriesReply({ content: `Lesson from the ${which} session, request ${fake.requests.length}.`, memory_type: "learnings" });
  };
  const first = await capture();
  expect(first.code).toBe(0);
  const bySession = new Map((await rows()).map((r) => [r.source_session, r]));
  expect(bySession.get("5f2c8a1e-7b3d-4c19-a0e4-9d61b2f38c57")).toMatchObject({ source_agent: "claude-code", project: "shop-api" });
  expect(bySession.get("0197a1c2-5d4e-7f00-9b1a-3c2d4e5f6a7b")).toMatchObject({ source_agent: "codex-cli", project: "billing-api" });
  expect(bySession.get("7c1e9a4b-2f3d-4e5a-9b8c-1d2e3f4a5b6c")).toMatchObject({ source_agent: "gemini-cli", project: "billing-api" });
  expect(bySession.get("ses_5a1b2c3d4ffeAbCdEfGhIjKl")).toMatchObject({ source_agent: "opencode", project: "web-shop" });
  expect(bySession.size).toBe(4);
  const sent = fake.requests.length;
  expect(sent).toBe(4);
  // Denoised and redacted on the way: no AGENTS.md boilerplate, no planted secrets reach the model.
  const all = fake.requests.map((r) => r.raw).join("\n");
  for (const gone of ["AGENTS.md instructions", "sk_live_51HxQz8Kp2mN4vR7tY9wB3cD5eF6gH8jK0lM2nP4qS6uV8xZ", "Xk9#mQ2vL7pR", "Called the Read tool"])
    expect(all).not.toContain(gone);

  // Nothing new anywhere: no request.
  expect((await capture()).code).toBe(0);
  expect(fake.requests.length).toBe(sent);

  // Both sessions go on; only Gemini is asked for.
  const codexFile = join(userHome, ".codex/sessions/2026/03/02", CODEX_NAME);
  appendFileSync(
    codexFile,
    `${JSON.stringify({ timestamp: "2026-03-02T10:00:00.000Z", type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text: "Also add a ledger test for exactly 10k EUR." }] } })}\n`,
  );
  const geminiFile = join(userHome, ".gemini/tmp/billing-api/chats/session-2026-03-03T10-02-7c1e9a4b.json");
  const doc = JSON.parse(readFileSync(geminiFile, "utf8"));
  doc.messages.push({
    id: "c0a1b2c3-0008",
    timestamp: "2026-03-03T10:08:00.000Z",
    type: "user",
    content: "Ship the warehouse export change behind the EXPORT_PAGED flag.",
  });
  writeFileSync(geminiFile, JSON.stringify(doc, null, 2));
  const only = await capture("--harness", "gemini");
  expect(only.code).toBe(0);
  expect(fake.requests.length).toBe(sent + 1);
  expect(fake.requests.at(-1)!.raw).toContain("EXPORT_PAGED");
  expect(fake.requests.at(-1)!.raw).not.toContain("nightly export to the data warehouse has been timing out");

  const rest = await capture();
  expect(rest.code).toBe(0);
  expect(fake.requests.length).toBe(sent + 2);
  expect(fake.requests.at(-1)!.raw).toContain("exactly 10k EUR");
  expect(fake.requests.at(-1)!.raw).not.toContain("999999 minor units");
}, 60_000);

test("usage errors name the choices", async () => {
  const bad = await capture("--harness", "cursor");
  expect(bad.code).toBe(2);
  expect(bad.err).toContain("--harness must be one of claude, codex, gemini, opencode");
  mkdirSync(join(userHome, "empty"), { recursive: true });
  const both = await capture("--harness", "codex", "--file", join(userHome, "empty"));
  expect(both.code).toBe(2);
});

test("Codex notify and Gemini CLI's SessionEnd hook start a background capture of that harness", async () => {
  const home = mkdtempSync(join(tmpdir(), "memsvc-client-"));
  writeFileSync(join(home, "config.json"), JSON.stringify({}));
  const user = mkdtempSync(join(tmpdir(), "memsvc-user-"));
  cpSync(join(FIX, "codex", CODEX_NAME), join(user, ".codex/sessions/2026/03/02", CODEX_NAME));
  const geminiChat = join(user, "chat-copy/session-2026-03-03T10-02-7c1e9a4b.json");
  cpSync(join(FIX, "gemini/tmp/billing-api/chats/session-2026-03-03T10-02-7c1e9a4b.json"), geminiChat);
  // A fresh server: the sessions above are not in it yet.
  const own = await startServer({ config: { llm: { baseURL: fake.baseURL, model: "fake-distiller", timeoutMs: 5000 } } });
  fake.fallback = (req) =>
    memoriesReply({
      content: `Background capture lesson ${req.raw.includes("ledger") ? "codex" : "gemini"} ${crypto.randomUUID()}.`,
      memory_type: "learnings",
    });
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("MEMSVC_") && k !== "CODEX_HOME" && k !== "XDG_DATA_HOME") env[k] = v;
  Object.assign(env, { HOME: user, MEMSVC_HOME: home, MEMSVC_URL: own.url });
  // Sorted here: PostgreSQL's ORDER BY follows the database's collation, SQLite's compares bytes.
  const agents = async () =>
    (await dbRows<{ source_agent: string }>(own.services, "SELECT DISTINCT source_agent FROM memories")).map((r) => r.source_agent).sort();
  const until = async (want: string[]) => {
    const end = Date.now() + 30_000;
    while (Date.now() < end && JSON.stringify(await agents()) !== JSON.stringify(want)) await Bun.sleep(100);
    return agents();
  };
  try {
    const notify = Bun.spawn(
      [
        process.execPath,
        join(ROOT, "src/main.ts"),
        "hook",
        "codex-notify",
        JSON.stringify({
          type: "agent-turn-complete",
          "thread-id": "0197a1c2-5d4e-7f00-9b1a-3c2d4e5f6a7b",
          "turn-id": "1",
          cwd: "/home/dana/src/billing-api",
          "input-messages": ["fix it"],
          "last-assistant-message": "done",
        }),
      ],
      { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" },
    );
    expect(await notify.exited).toBe(0);
    expect(await new Response(notify.stdout).text()).toBe("");
    expect(await until(["codex-cli"])).toEqual(["codex-cli"]);

    const end = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "hook", "session-end"], {
      cwd: ROOT,
      env,
      stdin: new Blob([
        JSON.stringify({
          session_id: "7c1e9a4b-2f3d-4e5a-9b8c-1d2e3f4a5b6c",
          transcript_path: geminiChat,
          cwd: "/home/dana/src/billing-api",
          hook_event_name: "SessionEnd",
          timestamp: "2026-03-03T10:09:00.000Z",
          reason: "exit",
        }),
      ]),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await end.exited).toBe(0);
    expect(await until(["codex-cli", "gemini-cli"])).toEqual(["codex-cli", "gemini-cli"]);
  } finally {
    await own.stop();
  }
}, 60_000);
