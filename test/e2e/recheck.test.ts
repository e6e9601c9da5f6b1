import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runNightly } from "../../src/core/nightly";
import { dbRows, onSqlite } from "../helpers/engine";
import { memoriesReply, startFakeLlm, type FakeLlm } from "../helpers/fake-llm";
import { BUN, childEnv, ROOT, run, tempHome } from "../helpers/process";
import { postJson, startServer, type TestServer } from "../helpers/server";
import { TEST_TOKEN } from "../helpers/services";

/**
 * End to end on a real git repository made here: `memsvc capture` sends a
 * Claude Code session that read three files to a real server whose model is
 * the fake; the distilled memories are anchored with evidence. A commit
 * changes an anchored file, `memsvc stale` marks them, and `memsvc nightly`
 * (its own process, the fake model answering per memory) confirms one,
 * rewrites one and retires one. History, recall and a second `memsvc stale`
 * show the outcome.
 */

const hasGit = spawnSync("git", ["--version"]).status === 0;
const HOUR = 3_600_000;
const NOW = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();

const CONFIRM = "The orders backfill in src/orders.ts copies rows in batches of 500 to keep lock times short.";
const REWRITE = "Stripe webhooks are verified in src/webhooks.ts with a five minute signature tolerance.";
const RETIRE = "The legacy CSV exporter in src/export.ts streams invoices to the accounting share nightly.";
const REWRITTEN =
  "Stripe webhooks are verified in src/webhooks.ts; the signature tolerance changed after the session that set it to five minutes, so read it there.";
// A session line no memory states: it must not be stored anywhere (raw session content is discarded).
const CHATTER = "by the way the espresso machine on floor three is descaled on fridays";

let srv: TestServer;
let fake: FakeLlm;
let repo: string;
let clientHome: string;
const auth = { authorization: `Bearer ${TEST_TOKEN}` };
const getJson = async (path: string) => (await (await fetch(`${srv.url}${path}`, { headers: auth })).json()) as any;
const ids: Record<"confirm" | "rewrite" | "retire", string> = { confirm: "", rewrite: "", retire: "" };

function git(at: number, ...args: string[]): string {
  const r = spawnSync("git", ["-C", repo, ...args], { encoding: "utf8", env: { ...process.env, GIT_AUTHOR_DATE: iso(at), GIT_COMMITTER_DATE: iso(at) } });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

const cli = (args: string[], home: string, cwd = ROOT) =>
  run([BUN, join(ROOT, "src", "main.ts"), ...args], childEnv(home, { MEMSVC_URL: srv.url }), cwd, 60_000);

beforeAll(async () => {
  if (!hasGit) return;
  fake = startFakeLlm();
  fake.fallback = (req) => {
    const text = req.raw;
    if (text.includes("You distil the working session")) {
      return memoriesReply(
        { content: CONFIRM, memory_type: "knowledge", tags: ["orders"], evidence: ["the backfill copies rows in batches of 500 so the lock stays short"] },
        { content: REWRITE, memory_type: "knowledge", tags: ["stripe"] },
        { content: RETIRE, memory_type: "knowledge", tags: ["export"] },
      );
    }
    if (text.includes("keep a software agent's long-term memory accurate")) {
      // The memory under review, not its evidence (which may quote the other topics of the session).
      const memory = /<memory>\n([\s\S]*?)\n<\/memory>/.exec(req.body.messages[1].content)?.[1] ?? "";
      if (memory === CONFIRM) return { json: { verdict: "confirm", reason: "batch size untouched by the change" } };
      if (memory === REWRITE) return { json: { verdict: "rewrite", content: REWRITTEN, reason: "the tolerance may have changed" } };
      if (memory === RETIRE) return { json: { verdict: "retire", reason: "the exporter was rewritten" } };
    }
    return { json: { learnings: [] } };
  };
  srv = await startServer({ config: { llm: { baseURL: fake.baseURL, model: "fake-model", timeoutMs: 20_000 } } });
  clientHome = tempHome();
  repo = mkdtempSync(join(tmpdir(), "memsvc-recheck-repo-"));
  git(NOW - 72 * HOUR, "init", "-q", "-b", "main");
  git(NOW, "config", "user.email", "t@example.com");
  git(NOW, "config", "user.name", "t");
  git(NOW, "remote", "add", "origin", "git@example.com:acme/shop.git");
  mkdirSync(join(repo, "src"));
  for (const f of ["orders.ts", "webhooks.ts", "export.ts"]) writeFileSync(join(repo, "src", f), `export const ${f.replace(".ts", "")} = 1;\n`);
  git(NOW - 72 * HOUR, "add", "-A");
  git(NOW - 72 * HOUR, "commit", "-qm", "initial");
});

afterAll(async () => {
  if (srv) await srv.stop();
  if (fake) await fake.stop();
});

describe.skipIf(!hasGit)("the nightly re-check on a real repository", () => {
  test("capture distils anchored memories and keeps an evidence excerpt per memory, not the session", async () => {
    const cwd = join(repo, "src");
    const at = (h: number) => iso(NOW - 60 * HOUR + h * 60_000);
    const tool = (name: string, input: unknown) => ({ type: "tool_use", id: `${name}-${Math.random()}`, name, input });
    const user = (text: string, t: string) =>
      JSON.stringify({ type: "user", sessionId: "recheck-e2e", cwd, timestamp: t, message: { role: "user", content: text } });
    const assistant = (content: unknown[], t: string) =>
      JSON.stringify({ type: "assistant", sessionId: "recheck-e2e", cwd, timestamp: t, message: { role: "assistant", content } });
    const transcript = join(mkdtempSync(join(tmpdir(), "memsvc-recheck-t-")), "recheck-e2e.jsonl");
    writeFileSync(
      transcript,
      `${[
        user("How does the orders backfill avoid long locks, and where are Stripe webhooks verified?", at(0)),
        assistant(
          [
            { type: "text", text: "Reading the backfill, the webhook handler and the exporter." },
            tool("Read", { file_path: join(cwd, "orders.ts") }),
            tool("Read", { file_path: join(cwd, "webhooks.ts") }),
            tool("Read", { file_path: join(cwd, "export.ts") }),
          ],
          at(1),
        ),
        assistant([{ type: "text", text: "the backfill copies rows in batches of 500 so the lock stays short" }], at(2)),
        assistant([{ type: "text", text: "Stripe webhooks are verified in webhooks.ts with a signature tolerance of five minutes" }], at(3)),
        user(CHATTER, at(4)),
        assistant([{ type: "text", text: "The legacy CSV exporter streams invoices to the accounting share every night." }], at(5)),
      ].join("\n")}\n`,
    );
    const r = await cli(["capture", "--file", transcript, "--format", "claude", "--json"], clientHome, cwd);
    expect(r.code).toBe(0);
    const rows = await dbRows<{ id: string; content: string }>(srv.services, "SELECT id, content FROM memories ORDER BY seq");
    expect(rows.map((x) => x.content).sort()).toEqual([CONFIRM, REWRITE, RETIRE].sort());
    for (const x of rows) {
      if (x.content === CONFIRM) ids.confirm = x.id;
      else if (x.content === REWRITE) ids.rewrite = x.id;
      else ids.retire = x.id;
    }
    const m = (await getJson(`/memory?id=${ids.confirm}`)).memory;
    expect(m.anchors[0]).toMatchObject({ repo: "example.com/acme/shop", paths: ["src/orders.ts", "src/webhooks.ts", "src/export.ts"] });
    expect(m.evidence).toBeUndefined();
    // The model's quote, found in the segment: that line only.
    expect((await getJson(`/memory?id=${ids.confirm}&evidence=true`)).memory.evidence).toEqual([
      { repo: "example.com/acme/shop", evidence: "assistant: the backfill copies rows in batches of 500 so the lock stays short" },
    ]);
    // No quote: the lines sharing the memory's words.
    const ev = (await getJson(`/memory?id=${ids.rewrite}&evidence=true`)).memory.evidence[0].evidence as string;
    expect(ev).toContain("Stripe webhooks are verified in webhooks.ts");
    const stored =
      JSON.stringify(await dbRows(srv.services, "SELECT * FROM memory_anchors")) + JSON.stringify(await dbRows(srv.services, "SELECT * FROM memories"));
    expect(stored).not.toContain("espresso");
  });

  test("a commit changes an anchored file; memsvc stale marks the memories; recall says they may be outdated", async () => {
    writeFileSync(join(repo, "src", "webhooks.ts"), "export const webhooks = 2; // tolerance now 300 s\n");
    git(NOW - 2 * HOUR, "commit", "-qam", "change the webhook tolerance");
    const r = await cli(["stale", "--json"], clientHome, repo);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).reports[0]).toMatchObject({ anchors: 3, marked: 3 });
    const rec = await postJson(
      `${srv.url}/recall-index`,
      { session_id: "recheck-before", prompt: "How are Stripe webhooks verified and what is the signature tolerance?", project: null },
      auth,
    );
    const block = ((await rec.json()) as any).block as string;
    const line = block.split("\n").find((l) => l.includes(ids.rewrite.slice(0, 8)));
    expect(line).toContain("may be outdated: src/webhooks.ts changed in 1 commit since");
  });

  test("memsvc nightly with the model confirms one, rewrites one (history kept) and retires one", async () => {
    const head = git(NOW, "rev-parse", "HEAD");
    let digest: any;
    if (onSqlite) {
      const r = await cli(["nightly", "--json"], srv.services.config.home);
      expect(r.stderr).toContain("recheck");
      expect([0, 3]).toContain(r.code);
      digest = JSON.parse(r.stdout);
    } else {
      // `memsvc nightly` opens only a SQLite file (it checks the file and its recorded embedder
      // before it starts): on PostgreSQL the server's schedule runs the job, as here.
      digest = (await runNightly(srv.services)).digest;
    }
    expect(digest.recheck).toMatchObject({ due: 3, confirmed: 1, rewritten: 1, retired: 1, unusable: 0, failed: 0 });

    const confirmed = (await getJson(`/memory?id=${ids.confirm}`)).memory;
    expect(confirmed.content).toBe(CONFIRM);
    expect(confirmed.anchors[0].stale).toBeUndefined();
    expect(confirmed.anchors[0]).toMatchObject({ commit: head, confirmed_at: expect.any(String) });

    const rewritten = (await getJson(`/memory?id=${ids.rewrite}`)).memory;
    expect(rewritten.content).toBe(REWRITTEN);
    expect(rewritten.anchors[0].stale).toBeUndefined();
    const history = await getJson(`/memory/history?id=${ids.rewrite}`);
    expect(history.versions.map((v: any) => [v.reason, v.content])).toEqual([["recheck", REWRITE]]);

    const gone = await fetch(`${srv.url}/memory?id=${ids.retire}`, { headers: auth });
    expect(gone.status).toBe(404);
    expect(await dbRows(srv.services, "SELECT memory_id FROM memory_anchors WHERE memory_id = ?", [ids.retire])).toEqual([]);

    for (const [id, prompt] of [
      [ids.confirm, "How does the orders backfill keep lock times short with batches?"],
      [ids.rewrite, "Where are Stripe webhooks verified, and what signature tolerance?"],
    ]) {
      const rec = await postJson(`${srv.url}/recall-index`, { session_id: `recheck-after-${id}`, prompt, project: null }, auth);
      const block = ((await rec.json()) as any).block as string;
      const line = block.split("\n").find((l) => l.includes(id.slice(0, 8)));
      expect(line).toBeDefined();
      expect(line).not.toContain("may be outdated");
    }
  });

  test("the same changes do not mark the confirmed memories again; a newer commit does", async () => {
    const again = await cli(["stale", "--json"], clientHome, repo);
    expect(JSON.parse(again.stdout).reports[0]).toMatchObject({ anchors: 2, marked: 0 });
    writeFileSync(join(repo, "src", "orders.ts"), "export const orders = 2; // batches of 1000\n");
    git(NOW - HOUR, "commit", "-qam", "bigger batches");
    const third = await cli(["stale", "--json"], clientHome, repo);
    const report = JSON.parse(third.stdout).reports[0];
    expect(report).toMatchObject({ anchors: 2, marked: 2 });
    expect(report.marks.every((m: any) => m.changed_paths.join() === "src/orders.ts" && m.commits === 1)).toBe(true);
  });
});
