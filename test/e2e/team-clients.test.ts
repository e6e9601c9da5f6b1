import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { homeRows, onPostgres } from "../helpers/engine";
import { memoriesReply, startFakeLlm, type FakeLlm } from "../helpers/fake-llm";
import { BUN, childEnv, freePort, ROOT, run, startProcess, tempHome, type Running } from "../helpers/process";
import { createDatabaseToken } from "../helpers/tokens";

/**
 * docs/teams.md's topologies from a member's machine: the hooks, `memsvc
 * capture` and `memsvc mcp` (the stdio bridge) send the `token` of their
 * home's config.json to the server, whose localhost bypass is off (the
 * default on PostgreSQL; turned off on SQLite here). With a member's database
 * token they work as that member's role allows; on PostgreSQL the server's own
 * config token authenticates nothing; a revocation stops them at once.
 */

const FIXTURE = join(ROOT, "test/fixtures/claude-code/orders-migration.jsonl");
let fake: FakeLlm;
let server: Running;
let serverHome: string;
let clientHome: string;
let work: string;
const clients: Client[] = [];

beforeAll(async () => {
  fake = startFakeLlm();
  serverHome = tempHome();
  const port = await freePort();
  // "" leaves the bypass at its default (off on PostgreSQL); SQLite's default on a loopback bind is on, so off by hand.
  server = await startProcess(
    [BUN, "src/main.ts", "server", "--port", String(port)],
    childEnv(serverHome, { MEMSVC_LOCALHOST_BYPASS: onPostgres ? "" : "0", MEMSVC_LLM_BASE_URL: fake.baseURL, MEMSVC_LLM_MODEL: "fake-distiller" }),
    port,
    undefined,
    60_000,
  );
  clientHome = mkdtempSync(join(tmpdir(), "memsvc-member-"));
  work = mkdtempSync(join(tmpdir(), "memsvc-transcripts-"));
}, 90_000);
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  server?.proc.kill();
  await fake?.stop();
});

/** The member's machine: its own home whose config.json holds the token (and the server's address through MEMSVC_URL). */
const clientEnv = () => childEnv(clientHome, { MEMSVC_URL: server.url, HOME: clientHome });
const setClientToken = (token: string) => writeFileSync(join(clientHome, "config.json"), JSON.stringify({ token }), { mode: 0o600 });
const textOf = (r: unknown) => ((r as { content: { text: string }[] }).content ?? []).map((c) => c.text).join("\n");

async function bridge(): Promise<Client> {
  const transport = new StdioClientTransport({ command: BUN, args: [join(ROOT, "src/main.ts"), "mcp"], env: clientEnv(), cwd: ROOT, stderr: "pipe" });
  const client = new Client({ name: "member-client", version: "1.0.0" });
  clients.push(client);
  await client.connect(transport);
  return client;
}

async function hookPrompt(prompt: string): Promise<string> {
  const p = Bun.spawn([BUN, join(ROOT, "src/main.ts"), "hook", "user-prompt"], {
    env: clientEnv(),
    cwd: ROOT,
    stdin: new Blob([
      JSON.stringify({ session_id: `s-${Math.random()}`, transcript_path: "", cwd: "/home/dana/src/shop-api", prompt, hook_event_name: "UserPromptSubmit" }),
    ]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out] = await Promise.all([p.exited, new Response(p.stdout).text()]);
  expect(code).toBe(0); // a hook never fails the agent's prompt
  return out;
}

const CONTENT = "The shop-api orders service retries failed payment webhooks 5 times with exponential backoff.";
const PROMPT = "how often does the orders service retry failed payment webhooks?";

describe("hooks, capture and memsvc mcp authenticate with the member's token (bypass off)", () => {
  test.skipIf(!onPostgres)(
    "PostgreSQL: the server's own config token authenticates nothing, from localhost too",
    async () => {
      const configToken = JSON.parse(readFileSync(join(serverHome, "config.json"), "utf8")).token as string;
      setClientToken(configToken);
      const r = await fetch(`${server.url}/recent`, { headers: { authorization: `Bearer ${configToken}` } });
      expect(r.status).toBe(401);
      const c = await bridge();
      const found = await c.callTool({ name: "memsvc_search", arguments: { query: "webhooks" } });
      expect(found.isError).toBe(true);
      expect(textOf(found)).toMatch(/401|wrong bearer token/);
      expect(await hookPrompt(PROMPT)).toBe("");
    },
    60_000,
  );

  test("a writer's token: the bridge ingests and searches as that member, the hook recalls, capture distils", async () => {
    setClientToken(await createDatabaseToken(serverHome, { name: "dana", role: "writer" }));
    const c = await bridge();
    const ingested = await c.callTool({ name: "memsvc_ingest", arguments: { content: CONTENT, project: "shop-api" } });
    expect(textOf(ingested)).not.toMatch(/error/i);
    expect(ingested.isError).toBeFalsy();
    const id = /\b([0-9a-f]{8})\b/.exec(textOf(ingested))![1];
    expect(await homeRows(serverHome, "SELECT created_by FROM memories WHERE id LIKE ?", [`${id}%`])).toEqual([{ created_by: "dana" }]);
    const found = await c.callTool({ name: "memsvc_search", arguments: { query: "orders webhooks retries backoff", project: "shop-api" } });
    expect(found.isError).toBeFalsy();
    expect(textOf(found)).toContain(id);

    const block = await hookPrompt(PROMPT);
    expect(block).toContain("Memory recall");
    expect(block).toContain(id);

    const transcript = join(work, "orders-migration.jsonl");
    copyFileSync(FIXTURE, transcript);
    fake.fallback = () => memoriesReply("The orders table migration in shop-api must run before the backfill script, or the backfill writes nulls.");
    const before = (await homeRows(serverHome, "SELECT count(*) AS n FROM memories"))[0].n;
    const cap = await run([BUN, join(ROOT, "src/main.ts"), "capture", "--file", transcript], clientEnv());
    expect({ code: cap.code, err: cap.stderr }).toMatchObject({ code: 0 });
    expect((await homeRows(serverHome, "SELECT count(*) AS n FROM memories"))[0].n).toBeGreaterThan(before);
  }, 90_000);

  test("a reader's token: recall and search work, writes are refused (403 in the tool's error)", async () => {
    setClientToken(await createDatabaseToken(serverHome, { name: "riley", role: "reader" }));
    const c = await bridge();
    const found = await c.callTool({ name: "memsvc_search", arguments: { query: "orders webhooks retries backoff", project: "shop-api" } });
    expect(found.isError).toBeFalsy();
    expect(textOf(found)).toContain("exponential backoff");
    const refused = await c.callTool({ name: "memsvc_ingest", arguments: { content: "Readers cannot write this.", project: "shop-api" } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("needs the writer role");
    expect(await hookPrompt(PROMPT)).toContain("Memory recall");
  }, 60_000);

  test("a revoked token stops the member's clients at their next call", async () => {
    setClientToken(await createDatabaseToken(serverHome, { name: "sam", role: "writer" }));
    const c = await bridge();
    expect((await c.callTool({ name: "memsvc_search", arguments: { query: "webhooks", project: "shop-api" } })).isError).toBeFalsy();
    const revoked = await run([BUN, join(ROOT, "src/main.ts"), "token", "revoke", "sam"], childEnv(serverHome));
    expect(revoked.code).toBe(0);
    const after = await c.callTool({ name: "memsvc_search", arguments: { query: "webhooks", project: "shop-api" } });
    expect(after.isError).toBe(true);
    expect(textOf(after)).toMatch(/revoked/);
    expect(await hookPrompt(PROMPT)).toBe("");
  }, 60_000);
});
