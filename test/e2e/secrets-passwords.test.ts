import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hostBinary } from "../helpers/dist";
import { homeRows, onSqlite, schemaForHome } from "../helpers/engine";
import { memoriesReply, startFakeLlm, type FakeLlm, type RecordedRequest } from "../helpers/fake-llm";
import { childEnv, freePort, run, startProcess, tempHome, type Running } from "../helpers/process";

// Issue 39 end to end through the compiled binary: passwords given on a command line and said in words
// go through `memsvc capture`, POST /distill (a fake model) and POST /ingest, and none reaches the model,
// the store, search results or the recall block. Every value below is made up.
const SECRETS = {
  // In the captured transcript: a prompt, a tool call's command, and the assistant's answer.
  prose: "Xk9#pL2mQ!v",
  sshpass: "Cl1-S3cret!z",
  mysql: "DbPw7788q",
  // Sent to /distill as is (no client-side redaction in front).
  distillCli: "D1still-Pw5",
  distillProse: "V10let-Lantern#4",
  // Sent to /ingest.
  ingestCli: "Ing3st Pw 9",
  ingestProse: "482915",
};
// Lower-case word pieces of the secrets, as a full-text index would keep them.
const PIECES = ["pl2mq", "s3cret", "dbpw7788q", "d1still", "v10let", "ing3st", "482915"];

const SESSION = "7c1e0b9a-2f4d-4e8a-9b3c-5d6e7f8a9b0c";
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
    uuid: `0c1d2e3f-4a5b-4c6d-8e7f-00000000000${n}`,
    timestamp: at,
  });
const TRANSCRIPT = [
  line(
    "user",
    `The staging root password is ${SECRETS.prose} - restore last night's orders dump on the deploy box and check the row counts.`,
    "2026-03-20T10:00:00.000Z",
    1,
  ),
  line(
    "assistant",
    [
      {
        type: "tool_use",
        id: "toolu_01",
        name: "Bash",
        input: {
          command: `sshpass -p '${SECRETS.sshpass}' ssh deploy@10.0.0.5 "mysql -u root -p${SECRETS.mysql} shop < /tmp/orders.sql"`,
          description: "Restore the orders dump",
        },
      },
    ],
    "2026-03-20T10:00:05.000Z",
    2,
  ),
  line(
    "user",
    [
      {
        tool_use_id: "toolu_01",
        type: "tool_result",
        content: "mysql: [Warning] Using a password on the command line interface can be insecure.\nrestored 48211 orders",
      },
    ],
    "2026-03-20T10:00:40.000Z",
    3,
  ),
  line(
    "assistant",
    [
      {
        type: "text",
        text: `Restored 48211 orders on the staging deploy box with the root password ${SECRETS.prose} you gave; the row counts match production.`,
      },
    ],
    "2026-03-20T10:00:45.000Z",
    4,
  ),
].join("\n");

/** A model that echoes what it was shown as memories, and adds the raw secrets it "remembers". */
function echoModel(req: RecordedRequest) {
  const user = String(req.body?.messages?.find((m: { role: string }) => m.role === "user")?.content ?? "");
  const shown = user
    .split("\n")
    .filter((l) => /password|passphrase|sshpass|mysql|docker|restore/i.test(l))
    .slice(0, 8);
  return memoriesReply(...shown.map((l) => ({ content: `The staging restore session noted: ${l}`, memory_type: "knowledge", tags: ["staging"] })), {
    content: `Staging restore: the root password is ${SECRETS.prose} and the dump is copied with sshpass -p '${SECRETS.sshpass}' to the deploy box.`,
    memory_type: "knowledge",
    tags: ["staging"],
  });
}

let bin: string;
let fake: FakeLlm;
let server: Running | null = null;
let serverHome: string;
let clientHome: string;
let work: string;

beforeAll(async () => {
  bin = await hostBinary();
  fake = startFakeLlm();
  fake.fallback = echoModel;
  serverHome = tempHome();
  const port = await freePort();
  const env = childEnv(serverHome);
  expect((await run([bin, "init"], env, join(bin, ".."))).code).toBe(0);
  const config = JSON.parse(readFileSync(join(serverHome, "config.json"), "utf8"));
  writeFileSync(join(serverHome, "config.json"), JSON.stringify({ ...config, llm: { baseURL: fake.baseURL, model: "fake-distiller", timeoutMs: 30_000 } }));
  server = await startProcess([bin, "server", "--port", String(port)], env, port, join(bin, ".."), 60_000);
  clientHome = mkdtempSync(join(tmpdir(), "memsvc-client-"));
  writeFileSync(
    join(clientHome, "config.json"),
    JSON.stringify({ agentId: "3d5e7f90-1a2b-4c3d-8e9f-0a1b2c3d4e5f", sourceAgent: "dana-laptop", sourceDomain: "backend" }),
  );
  work = mkdtempSync(join(tmpdir(), "memsvc-transcripts-"));
}, 240_000);

afterAll(async () => {
  server?.proc.kill("SIGKILL");
  await fake?.stop();
});

const post = (path: string, body: unknown) =>
  fetch(`${server!.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** Everything the server's store holds, as text: the SQLite file and its WAL byte for byte, or every row of its PostgreSQL schema. */
async function storeText(): Promise<string> {
  if (onSqlite)
    return ["", "-wal"]
      .map((x) => join(serverHome, `memsvc.db${x}`))
      .filter(existsSync)
      .map((f) => readFileSync(f).toString("latin1"))
      .join("");
  const tables = await homeRows<{ t: string }>(serverHome, "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = ?", [
    schemaForHome(serverHome),
  ]);
  const parts: string[] = [];
  for (const { t } of tables) parts.push(JSON.stringify(await homeRows(serverHome, `SELECT * FROM ${t}`)));
  return parts.join("\n");
}

/** Every file under a folder, as text. */
function filesText(dir: string): string {
  return readdirSync(dir, { recursive: true })
    .map((f) => join(dir, String(f)))
    .filter((f) => statSync(f).isFile())
    .map((f) => readFileSync(f).toString("latin1"))
    .join("\n");
}

function expectNoSecret(where: string, text: string) {
  for (const [name, secret] of Object.entries(SECRETS)) expect({ where, name, leaked: text.includes(secret) }).toEqual({ where, name, leaked: false });
  const lower = text.toLowerCase();
  for (const piece of PIECES) expect({ where, piece, leaked: lower.includes(piece) }).toEqual({ where, piece, leaked: false });
}

test("a command-line and a prose password go through capture, /distill and /ingest of the compiled binary: no value reaches the model, the store, search or recall", async () => {
  // 1. memsvc capture of a Claude Code transcript (the client redacts, the server again).
  const file = join(work, `${SESSION}.jsonl`);
  writeFileSync(file, `${TRANSCRIPT}\n`);
  const captured = await run([bin, "capture", "--file", file], childEnv(clientHome, { MEMSVC_URL: server!.url }), work, 120_000);
  expect({ code: captured.code, stderr: captured.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  const afterCapture = fake.requests.length;
  expect(afterCapture).toBeGreaterThan(0);

  // 2. POST /distill with the passwords as they were typed: only the server redacts.
  const distilled = await post("/distill", {
    session_id: "secrets-e2e-distill",
    segment_id: "1",
    messages: [
      {
        role: "user",
        content: `Log in to the staging registry first: docker login -u ci -p "${SECRETS.distillCli}" registry.acme.dev, then restore the orders dump.`,
      },
      { role: "assistant", content: `Done. For the record, the vault passphrase is ${SECRETS.distillProse} and the staging restore finished.` },
    ],
  });
  expect(distilled.status).toBe(201);
  expect(fake.requests.length).toBeGreaterThan(afterCapture);

  // 3. POST /ingest of a memory holding both kinds.
  const ingested = await post("/ingest", {
    content: `Staging restore runbook: fetch the dump with curl -u admin:'${SECRETS.ingestCli}' https://jenkins.acme.dev/job/dump/lastSuccessfulBuild/artifact/orders.sql; the pin is ${SECRETS.ingestProse} for the deploy box's console.`,
    memory_type: "knowledge",
  });
  expect(ingested.status).toBe(201);
  const ingestedId = ((await ingested.json()) as { id: string }).id;
  const memory = ((await (await fetch(`${server!.url}/memory?id=${ingestedId}`)).json()) as { memory: { content: string } }).memory.content;
  // Only the values went: the command and the sentence around them stay.
  expect(memory).toBe(
    "Staging restore runbook: fetch the dump with curl -u admin:[REDACTED:cli-password] https://jenkins.acme.dev/job/dump/lastSuccessfulBuild/artifact/orders.sql; the pin is [REDACTED:password] for the deploy box's console.",
  );

  // The model saw the sessions, redacted: markers where the passwords stood, and none of them.
  const sent = fake.requests.map((r) => r.raw).join("\n");
  expect(sent).toContain("sshpass -p [REDACTED:cli-password] ssh deploy@10.0.0.5");
  expect(sent).toContain("The staging root password is [REDACTED:password]");
  expect(sent).toContain("docker login -u ci -p [REDACTED:cli-password] registry.acme.dev");
  expectNoSecret("the model's requests", sent);

  // The store: the memories the echoing model made (with the secrets it added) were stored redacted.
  const stored = await homeRows<{ content: string }>(serverHome, "SELECT content FROM memories");
  expect(stored.length).toBeGreaterThan(2);
  expect(stored.some((m) => m.content.includes("the root password is [REDACTED:password]"))).toBe(true);
  expectNoSecret("the store", await storeText());

  // Search results and the recall block.
  const search = await (await fetch(`${server!.url}/search?query=${encodeURIComponent("staging restore root password sshpass deploy box")}`)).text();
  expect(search).toContain("[REDACTED:");
  expectNoSecret("search results", search);
  const recall = (await (
    await post("/recall-index", {
      session_id: "secrets-e2e-recall",
      prompt: "how do I restore the staging orders dump on the deploy box with the root password?",
    })
  ).json()) as { block: string | null };
  expect(recall.block).toContain("[REDACTED:");
  expectNoSecret("the recall block", recall.block ?? "");

  // Nor anywhere the capture client keeps its state, nor in the server's log.
  expectNoSecret("the capture client's home", filesText(clientHome));
  expectNoSecret("the server's log", server!.stderr());
}, 240_000);
