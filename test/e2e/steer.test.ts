import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countTokens } from "../../src/core/tokenizer";
import { hostBinary } from "../helpers/dist";
import { memoriesReply, startFakeLlm, type FakeLlm } from "../helpers/fake-llm";
import { childEnv, freePort, run, startProcess, tempHome, type Running } from "../helpers/process";

/**
 * Issue 37 through the compiled binary: prompts through `memsvc hook
 * user-prompt`, a captured transcript that relies on one injected memory and
 * ignores another; receipts, `memsvc why`, use detection; `memsvc feedback`
 * wrong and irrelevant; a rewrite and a restore; a harness's token budget.
 */

const SESSION = "5a8e1c2d-3b4f-4a6e-9c7d-1e2f3a4b5c6d";
const PROMPT = "Which port does the staging postgres database listen on, and how do production deploys get approved?";

let bin: string;
let fake: FakeLlm;
let server: Running | null = null;
let serverHome: string;
let clientHome: string;
let work: string;
const ids: Record<string, string> = {};

const post = (path: string, body: unknown) =>
  fetch(`${server!.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const get = async (path: string) => (await fetch(`${server!.url}${path}`)).json();
const clientEnv = () => childEnv(clientHome, { MEMSVC_URL: server!.url, HOME: clientHome });

/** `memsvc hook user-prompt` as Claude Code (or Gemini CLI) runs it: the hook JSON on stdin, the block on stdout. */
async function hookPrompt(session: string, prompt: string, harness?: "gemini"): Promise<string> {
  const p = Bun.spawn([bin, "hook", "user-prompt", ...(harness ? ["--harness", harness] : [])], {
    env: clientEnv(),
    cwd: work,
    stdin: new Blob([
      JSON.stringify({ session_id: session, transcript_path: "", cwd: "/home/dana/src/shop-api", prompt, hook_event_name: "UserPromptSubmit" }),
    ]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out] = await Promise.all([p.exited, new Response(p.stdout).text()]);
  expect(code).toBe(0);
  return out;
}

const line = (type: "user" | "assistant", content: unknown, at: string, n: number) =>
  JSON.stringify({
    parentUuid: null,
    isSidechain: false,
    userType: "external",
    cwd: "/home/dana/src/shop-api",
    sessionId: SESSION,
    version: "1.0.98",
    gitBranch: "main",
    type,
    message: type === "user" ? { role: "user", content } : { id: `msg_${n}`, type: "message", role: "assistant", model: "claude-sonnet-4-5", content },
    uuid: `0c1d2e3f-4a5b-4c6d-8e7f-00000000001${n}`,
    timestamp: at,
  });

beforeAll(async () => {
  bin = await hostBinary();
  fake = startFakeLlm();
  fake.fallback = () => memoriesReply();
  serverHome = tempHome();
  const port = await freePort();
  const env = childEnv(serverHome);
  expect((await run([bin, "init"], env, join(bin, ".."))).code).toBe(0);
  const config = JSON.parse(readFileSync(join(serverHome, "config.json"), "utf8"));
  writeFileSync(
    join(serverHome, "config.json"),
    JSON.stringify({
      ...config,
      llm: { baseURL: fake.baseURL, model: "fake-distiller", timeoutMs: 30_000 },
      recall: { maxTokensByHarness: { "gemini-cli": 110 } },
    }),
  );
  server = await startProcess([bin, "server", "--port", String(port)], env, port, join(bin, ".."), 60_000);
  clientHome = mkdtempSync(join(tmpdir(), "memsvc-steer-client-"));
  work = mkdtempSync(join(tmpdir(), "memsvc-steer-work-"));
  const ingest = async (key: string, content: string) => {
    const r = await post("/ingest", { content, project: "shop-api", memory_type: "knowledge" });
    expect(r.status).toBe(201);
    ids[key] = (await r.json()).id;
  };
  await ingest("pg", "The staging Postgres database listens on port 5433 behind pgbouncer; nightly backups run pg_dump into the s3 bucket shop-backups-eu.");
  await ingest("deploy", "Production deploys are approved by hand in the GitHub Actions workflow deploy.yml (environment production, two reviewers).");
  // The server loads its tokenizer at its first lull (about a second of its thread): let it, so the hooks' 1 s budget is not spent waiting.
  await Bun.sleep(3000);
}, 300_000);

afterAll(async () => {
  server?.proc.kill("SIGKILL");
  await fake?.stop();
});

test("receipts, use detection, feedback, restore and a harness budget through the compiled binary", async () => {
  // 1. The prompt through the hook: both memories are injected.
  const block = await hookPrompt(SESSION, PROMPT);
  expect(block).toStartWith("## Memory recall (auto)");
  expect(block).toContain(ids.pg.slice(0, 8));
  expect(block).toContain(ids.deploy.slice(0, 8));

  // 2. The agent's turns rely on the postgres memory (its port, its pooler) and ignore the deploy one.
  const t = (ms: number) => new Date(Date.now() + ms).toISOString();
  const transcript = join(work, `${SESSION}.jsonl`);
  writeFileSync(
    transcript,
    `${[
      line("user", PROMPT, t(0), 1),
      line(
        "assistant",
        [
          {
            type: "tool_use",
            id: "toolu_01",
            name: "Bash",
            input: { command: "psql -h staging-db -p 5433 -U app -c 'show pool_mode' # via pgbouncer", description: "Check the staging database" },
          },
        ],
        t(50),
        2,
      ),
      line("user", [{ tool_use_id: "toolu_01", type: "tool_result", content: "pool_mode: transaction" }], t(100), 3),
      line(
        "assistant",
        [{ type: "text", text: "Staging answers on 5433 through pgbouncer. I could not find how production is released here; ask the team." }],
        t(150),
        4,
      ),
    ].join("\n")}\n`,
  );
  const captured = await run([bin, "capture", "--file", transcript], clientEnv(), work, 120_000);
  expect({ code: captured.code, stderr: captured.stderr }).toMatchObject({ code: 0 });

  // 3. The receipt lists both, with score parts and token counts; the used one is counted used, the other not.
  const [receipt] = (await get(`/recall/receipts?session_id=${SESSION}`)).receipts;
  expect(receipt).toMatchObject({ kind: "recall", session_id: SESSION, agent: "claude-code", project: "shop-api", prompt: PROMPT, budget: 600 });
  expect(receipt.tokens).toBe(await countTokens(block.trimEnd()));
  const byId = Object.fromEntries(receipt.injected.map((m: { id: string }) => [m.id, m]));
  for (const id of [ids.pg, ids.deploy]) {
    expect(byId[id].tokens).toBeGreaterThan(0);
    expect(byId[id].parts).toMatchObject({ full_text: expect.any(Number), strength: expect.any(Number), recency: expect.any(Number), stale: 1, graph: null });
  }
  expect(byId[ids.pg].used).toBe(true);
  expect(byId[ids.deploy].used).toBe(false);
  const detail = async (id: string) => (await get(`/memories/detail?id=${id}`)).memory;
  expect((await detail(ids.pg)).used_count).toBe(1);
  expect((await detail(ids.deploy)).used_count).toBe(0);

  // `memsvc why` prints the same as a trace.
  const why = await run([bin, "why", "--session", SESSION], clientEnv(), work);
  expect(why.code).toBe(0);
  expect(why.stdout).toContain(`prompt: ${PROMPT}`);
  expect(why.stdout).toMatch(new RegExp(`used +${ids.pg.slice(0, 8)}  score [\\d.]+, \\d+ tokens  \\(full text`));
  expect(why.stdout).toMatch(new RegExp(` {5}${ids.deploy.slice(0, 8)}  score`));

  // 3b. Gemini CLI's 110-token budget (the same prompt): the block fits it (tokenizer-counted), and the receipt names what it cut.
  const gemini = JSON.parse(await hookPrompt(`${SESSION}-7`, PROMPT, "gemini"));
  const text: string = gemini.hookSpecificOutput?.additionalContext ?? "";
  const [g] = (await get(`/recall/receipts?session_id=${SESSION}-7&limit=1`)).receipts;
  expect(g).toMatchObject({ agent: "gemini-cli", budget: 110 });
  expect(text).toStartWith("## Memory recall (auto)");
  expect(await countTokens(text)).toBeLessThanOrEqual(110);
  expect(g.tokens).toBeLessThanOrEqual(110);
  expect(g.dropped.some((d: { reason: string }) => d.reason === "budget")).toBe(true);

  // 4. wrong: the deploy memory is out of the next identical prompt's block.
  const wrong = await run([bin, "feedback", ids.deploy.slice(0, 8), "wrong", "--note", "we release with Argo CD now"], clientEnv(), work);
  expect(wrong.code).toBe(0);
  expect(wrong.stdout).toContain("out of recall");
  const afterWrong = await hookPrompt(`${SESSION}-2`, PROMPT);
  expect(afterWrong).toContain(ids.pg.slice(0, 8));
  expect(afterWrong).not.toContain(ids.deploy.slice(0, 8));

  // 5. irrelevant: the postgres memory is demoted for this prompt's topic only.
  const irrelevant = await run([bin, "feedback", ids.pg.slice(0, 8), "irrelevant"], clientEnv(), work);
  expect(irrelevant.code).toBe(0);
  expect(await hookPrompt(`${SESSION}-3`, PROMPT)).not.toContain(ids.pg.slice(0, 8));
  expect(await hookPrompt(`${SESSION}-4`, "Where do the nightly pg_dump backups go, which s3 bucket holds them?")).toContain(ids.pg.slice(0, 8));

  // 6. A rewrite settles the wrong mark; a restore brings the rewritten text back, history kept.
  const patched = await fetch(`${server!.url}/memory`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      id: ids.deploy,
      content: "Production deploys are approved in Argo CD by two reviewers; the production workflow only builds images.",
    }),
  });
  expect(patched.status).toBe(200);
  // (A prompt about deploys alone: the postgres memory, demoted for the two-part prompt, no longer opens its block.)
  const DEPLOYS = "How do production deploys get approved by the reviewers?";
  const rewritten = await hookPrompt(`${SESSION}-5`, DEPLOYS);
  expect(rewritten).toContain(ids.deploy.slice(0, 8));
  expect(rewritten).toContain("Argo CD");
  const restored = await run([bin, "history", ids.deploy.slice(0, 8), "--restore", "1"], clientEnv(), work);
  expect(restored.code).toBe(0);
  const back = await hookPrompt(`${SESSION}-6`, DEPLOYS);
  expect(back).toContain(ids.deploy.slice(0, 8));
  expect(back).toContain("deploy.yml");
}, 240_000);
