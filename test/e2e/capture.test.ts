import { afterAll, beforeAll, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readState, stateDir } from "../../src/capture/watermark";
import { memoriesReply, startFakeLlm, type FakeLlm } from "../helpers/fake-llm";
import { dbRows } from "../helpers/engine";
import { startServer, type TestServer } from "../helpers/server";

const ROOT = resolve(import.meta.dir, "../..");
const FIXTURE = join(ROOT, "test/fixtures/claude-code/orders-migration.jsonl");
const AGENT_ID = "3d5e7f90-1a2b-4c3d-8e9f-0a1b2c3d4e5f";

let fake: FakeLlm;
let srv: TestServer;
let serverHome: string;
let clientHome: string;
let work: string;

const llmConfig = () => ({ llm: { baseURL: fake.baseURL, model: "fake-distiller", timeoutMs: 5000 } });

beforeAll(async () => {
  fake = startFakeLlm();
  serverHome = mkdtempSync(join(tmpdir(), "memsvc-srv-"));
  srv = await startServer({ home: serverHome, config: llmConfig() });
  clientHome = mkdtempSync(join(tmpdir(), "memsvc-client-"));
  writeFileSync(join(clientHome, "config.json"), JSON.stringify({ agentId: AGENT_ID, sourceAgent: "dana-laptop", sourceDomain: "backend" }));
  work = mkdtempSync(join(tmpdir(), "memsvc-transcripts-"));
});
afterAll(async () => {
  await srv?.stop();
  await fake.stop();
});

function runCapture(file: string, url = srv.url) {
  return Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "capture", "--file", file], {
    cwd: ROOT,
    env: { ...process.env, MEMSVC_HOME: clientHome, MEMSVC_URL: url },
    stdout: "pipe",
    stderr: "pipe",
  });
}

async function capture(file: string, url = srv.url) {
  const p = runCapture(file, url);
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, out, err };
}

const memories = () => dbRows<{ content: string; source_session: string }>(srv.services, "SELECT content, source_session FROM memories ORDER BY seq");

// A continuation of the session as Claude Code would append it.
function appendTurn(file: string, text: string, at: string) {
  const line = {
    parentUuid: null,
    isSidechain: false,
    userType: "external",
    cwd: "/home/dana/src/shop-api",
    sessionId: "5f2c8a1e-7b3d-4c19-a0e4-9d61b2f38c57",
    version: "1.0.98",
    gitBranch: "main",
    type: "user",
    message: { role: "user", content: text },
    uuid: crypto.randomUUID(),
    timestamp: at,
  };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}

test("fixture transcript -> denoise -> segments -> server; server killed mid-way -> watermark stays -> rerun: nothing lost, nothing doubled", async () => {
  const file = join(work, "orders-migration.jsonl");
  copyFileSync(FIXTURE, file);
  const state = () => readState(stateDir(clientHome), file);

  // 1. The whole session as one segment.
  fake.fallback = () =>
    memoriesReply(
      {
        content: "On shop-api staging the nightly orders export (pg_dump at 08:00 UTC) holds a lock that blocks migrations for ~25 minutes.",
        memory_type: "knowledge",
        tags: ["postgres"],
      },
      {
        content: "Postgres CREATE INDEX CONCURRENTLY cannot run inside a transaction; shop-api migrations mark such files with -- migrate:no-transaction.",
        memory_type: "learnings",
      },
    );
  const first = await capture(file);
  expect(first.code).toBe(0);
  expect(first.out).toContain("shop-api");
  expect(fake.requests).toHaveLength(1);
  const prompt: string = fake.requests[0].body.messages[1].content;
  // The denoiser kept the words and cut the bulk.
  expect(prompt).toContain("The staging deploy hangs on the orders migration again");
  expect(prompt).toContain("Found it. The nightly export cron");
  expect(prompt).not.toContain("migration 0030 applies and rolls back");
  expect(prompt).not.toContain("signature");
  expect(prompt).not.toContain("Xk9-Planted-Staging-pw");
  expect(prompt.length).toBeLessThan(statSync(file).size / 2);
  const rows = await dbRows(srv.services, "SELECT source_agent, source_agent_id, source_domain, project, source_session, created_at FROM memories");
  expect(rows).toHaveLength(2);
  for (const r of rows) {
    expect(r).toMatchObject({
      source_agent: "dana-laptop",
      source_agent_id: AGENT_ID,
      source_domain: "backend",
      project: "shop-api",
      source_session: "5f2c8a1e-7b3d-4c19-a0e4-9d61b2f38c57",
    });
    expect(new Date(r.created_at).toISOString()).toBe("2026-03-14T09:12:34.701Z");
  }
  expect(state()?.offset).toBe(statSync(file).size);
  expect(state()?.pending).toEqual([]);

  // 2. Nothing new: no request at all.
  const idle = await capture(file);
  expect(idle.code).toBe(0);
  expect(fake.requests).toHaveLength(1);

  // 3. The session goes on; the server is killed while distilling the new delta.
  const watermark = statSync(file).size;
  appendTurn(file, "Also remember: the finance team agreed to move the nightly orders export to 03:00 UTC starting next Monday.", "2026-03-15T10:00:00.000Z");
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  fake.script({
    wait: gate,
    then: memoriesReply({ content: "The shop-api nightly orders export moves to 03:00 UTC, agreed with the finance team.", memory_type: "decisions" }),
  });
  const inflight = runCapture(file);
  while (fake.requests.length < 2) await Bun.sleep(10);
  const stopping = srv.stop(); // drops the client's connection, then waits for the distill to finish
  // The client has seen its connection dropped once it exits; only then may the distill finish (no guessed sleep).
  const code = await inflight.exited;
  open();
  await stopping;
  expect(code).toBe(1);
  expect(state()?.offset).toBe(watermark);
  expect(state()?.pending).toHaveLength(1);
  const pendingId = state()!.pending[0].id;

  // 4. No server at all: still not advanced, same segment kept.
  const down = await capture(file);
  expect(down.code).toBe(1);
  expect(down.err).toContain("retried next run");
  expect(state()?.offset).toBe(watermark);

  // 5. Restart on the same home and rerun: the segment the server already stored is skipped, not doubled.
  srv = await startServer({ home: serverHome, config: llmConfig() });
  appendTurn(file, "And the export job must use pg_dump --snapshot so it stops holding the lock for the whole run of the dump.", "2026-03-15T11:00:00.000Z");
  fake.fallback = () =>
    memoriesReply({
      content: "The shop-api nightly orders export should use pg_dump with an exported snapshot to avoid long locks.",
      memory_type: "decisions",
    });
  const again = await capture(file);
  expect(again.code).toBe(0);
  const contents = (await memories()).map((m) => m.content);
  expect(contents.filter((c) => c.includes("moves to 03:00 UTC"))).toHaveLength(1);
  expect(contents.filter((c) => c.includes("exported snapshot"))).toHaveLength(1);
  expect(contents).toHaveLength(4);
  // The retried segment was answered from dedup (no model call); only the newest delta reached the model.
  expect(fake.requests).toHaveLength(3);
  expect(fake.requests[2].raw).toContain("pg_dump --snapshot");
  expect(fake.requests[2].raw).not.toContain("03:00 UTC starting next Monday");
  const segs = (await dbRows<{ key: string }>(srv.services, "SELECT key FROM segments ORDER BY created_at")).map((s) => s.key);
  expect(segs).toHaveLength(3);
  expect(segs).toContain(`5f2c8a1e-7b3d-4c19-a0e4-9d61b2f38c57#${pendingId}`);
  expect(state()?.offset).toBe(statSync(file).size);
  expect(state()?.pending).toEqual([]);
}, 60_000);

test("dry run sends nothing and writes no state; a generic JSONL transcript is read too", async () => {
  const generic = join(work, "generic.jsonl");
  copyFileSync(join(ROOT, "test/fixtures/generic/session.jsonl"), generic);
  const before = fake.requests.length;
  const p = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "capture", "--file", generic, "--format", "generic", "--dry-run", "--json"], {
    cwd: ROOT,
    env: { ...process.env, MEMSVC_HOME: clientHome, MEMSVC_URL: srv.url },
    stdout: "pipe",
  });
  expect(await p.exited).toBe(0);
  const report = JSON.parse(await new Response(p.stdout).text());
  expect(report.reports[0]).toMatchObject({ sessionId: "gen-7c1d", project: "search-svc", status: "dry run", segments: 1 });
  expect(fake.requests.length).toBe(before);
  expect(readState(stateDir(clientHome), generic)).toBeNull();
  fake.fallback = () =>
    memoriesReply("Elasticsearch 8 dropped the custom asciifolding analyzer from the products index template of search-svc; umlaut searches need it re-added.");
  expect((await capture(generic)).code).toBe(0);
  const body = fake.requests.at(-1)!.body.messages[1].content as string;
  expect(body).toContain("user: Search results for umlauts are empty");
  expect(body).not.toContain("You are a coding assistant");
});

test("capture --help and usage errors", async () => {
  const help = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "capture", "--help"], { cwd: ROOT, stdout: "pipe" });
  expect(await help.exited).toBe(0);
  expect(await new Response(help.stdout).text()).toContain("--dry-run");
  const bad = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "capture", "--format", "xml"], {
    cwd: ROOT,
    stderr: "pipe",
    env: { ...process.env, MEMSVC_HOME: clientHome },
  });
  expect(await bad.exited).toBe(2);
  expect(await new Response(bad.stderr).text()).toContain("--format must be one of claude, codex, gemini, generic");
  expect(readFileSync(FIXTURE, "utf8").length).toBeGreaterThan(0);
});

/** A short Claude Code session, as lines (Claude Code writes UTF-8; `encoding` makes one that is not). */
function claudeSession(sessionId: string, user: string, assistant: string): string {
  const base = { isSidechain: false, userType: "external", cwd: "/home/dana/src/shop-api", sessionId, version: "1.0.98" };
  return [
    { ...base, type: "user", message: { role: "user", content: user }, timestamp: "2026-03-15T10:00:00.000Z" },
    { ...base, type: "assistant", message: { role: "assistant", content: [{ type: "text", text: assistant }] }, timestamp: "2026-03-15T10:00:05.000Z" },
  ]
    .map((l) => `${JSON.stringify(l)}\n`)
    .join("");
}

const LATIN1_SESSION = claudeSession(
  "latin-1-session",
  "Das Menü für Größenangaben zeigt Müll, seit der Export auf Windows läuft.",
  "Die Datei kam als Latin-1 an; ich habe den Import auf UTF-8 umgestellt und die Größen erscheinen wieder.",
);

test("a transcript that is not UTF-8 is refused naming the file; nothing of it is sent and its watermark stays", async () => {
  const file = join(work, "latin1.jsonl");
  writeFileSync(file, Buffer.from(LATIN1_SESSION, "latin1"));
  const before = fake.requests.length;
  const r = await capture(file);
  expect(r.code).toBe(1);
  expect(r.err).toContain(`${file}: not UTF-8 text (line 1: byte 0xFC at offset`);
  expect(r.out).toMatch(/latin1: not read: .*not UTF-8 text.*; skipped/);
  expect(fake.requests.length).toBe(before);
  expect(readState(stateDir(clientHome), file)).toBeNull();
  expect((await memories()).map((m) => m.content).join("\n")).not.toContain("\uFFFD");
});

test("capture --dir: a Latin-1 transcript is skipped (exit 1), the UTF-8 ones after it are still sent", async () => {
  const dir = mkdtempSync(join(tmpdir(), "memsvc-projects-"));
  const project = join(dir, "-home-dana-src-shop-api");
  mkdirSync(project);
  const bad = join(project, "a-latin1.jsonl");
  const good = join(project, "b-utf8.jsonl");
  writeFileSync(bad, Buffer.from(LATIN1_SESSION, "latin1"));
  writeFileSync(
    good,
    claudeSession(
      "utf8-session-after-latin1",
      "Why does the invoice PDF job time out on the shop-api staging box since Monday?",
      "The PDF renderer waits on fonts from a CDN that staging cannot reach; I vendored the fonts into the image and the job finishes in 4 s.",
    ),
  );
  // Oldest first: the refused file comes before the good one.
  utimesSync(bad, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  fake.fallback = () => memoriesReply("On shop-api staging the invoice PDF job needs the fonts vendored into the image: the CDN is unreachable from staging.");
  const p = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "capture", "--dir", dir], {
    cwd: ROOT,
    env: { ...process.env, MEMSVC_HOME: clientHome, MEMSVC_URL: srv.url },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  expect(code).toBe(1);
  expect(err).toContain(`${bad}: not UTF-8 text`);
  expect(out).toContain("utf8-session-after-latin1 (shop-api): sent 1 segment; 1 memory");
  expect(readState(stateDir(clientHome), bad)).toBeNull();
  expect(readState(stateDir(clientHome), good)?.offset).toBe(statSync(good).size);
  expect((await memories()).some((m) => m.source_session === "utf8-session-after-latin1")).toBe(true);
}, 30_000);

test("a Gemini CLI chat file that is not UTF-8 is refused by name, not taken for a half-written recording", async () => {
  const file = join(work, "session-2026-03-15T10-00-latin1.json");
  writeFileSync(
    file,
    Buffer.from(
      JSON.stringify({ sessionId: "g-latin1", messages: [{ id: "1", timestamp: "2026-03-15T10:00:00Z", type: "user", content: "Größe" }] }),
      "latin1",
    ),
  );
  const r = await capture(file);
  expect(r.code).toBe(1);
  expect(r.err).toContain(`${file}: not UTF-8 text`);
  expect(r.err).not.toContain("not a Gemini CLI chat recording");
});
