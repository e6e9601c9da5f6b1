import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runWhy } from "../../src/cli/why";
import { countTokens } from "../../src/core/tokenizer";
import { dbRow, dbRows } from "../helpers/engine";
import { postJson, startServer, type TestServer } from "../helpers/server";

let srv: TestServer;
const ids: Record<string, string> = {};

async function ingest(key: string, body: Record<string, unknown>): Promise<void> {
  const r = await postJson(`${srv.url}/ingest`, body);
  expect(r.status).toBe(201);
  ids[key] = (await r.json()).id;
}

const recall = async (body: unknown, query = "") => {
  const r = await postJson(`${srv.url}/recall-index${query}`, body);
  expect(r.status).toBe(200);
  return r.json();
};
const get = async (path: string) => {
  const r = await fetch(`${srv.url}${path}`);
  const body = await r.json();
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(body)}`);
  return body;
};

beforeAll(async () => {
  srv = await startServer();
  await ingest("pg", { content: "The staging Postgres database listens on port 5433 behind pgbouncer.", project: "infra", session_date: "2026-03-01" });
  await ingest("pgpool", {
    content: "The staging Postgres database pool is pgbouncer in transaction mode, port 6432.",
    project: "infra",
    session_date: "2026-03-01",
  });
  await ingest("deploy", {
    content: "Production deploys run through the GitHub Actions workflow deploy.yml with a manual approval.",
    project: "infra",
    session_date: "2026-03-02",
  });
  await ingest("vite", {
    content: "The React frontend is built with Vite and served by nginx.",
    project: "web",
    memory_type: "knowledge",
    session_date: "2026-03-02",
  });
});
afterAll(async () => {
  await srv.stop();
});

describe("receipts", () => {
  test("explain=true returns the receipt with the block: score parts, tokens, and the same answer otherwise", async () => {
    const body = await recall(
      { session_id: "r1", prompt: "which port does the staging postgres database listen on?", project: "infra", agent: "claude-code" },
      "?explain=true",
    );
    expect(body.block).toStartWith("## Memory recall (auto)");
    expect(body.shown).toContain(ids.pg);
    const e = body.explain;
    expect(e).toMatchObject({ kind: "recall", via: "rest", session_id: "r1", turn: 1, agent: "claude-code", project: "infra", budget: 600 });
    expect(e.prompt).toBe("which port does the staging postgres database listen on?");
    expect(e.prompt_hash).toMatch(/^[0-9a-f]{64}$/);
    // The block's size is counted by the tokenizer, exactly.
    expect(e.tokens).toBe(await countTokens(body.block));
    const pg = e.injected.find((m: { id: string }) => m.id === ids.pg);
    expect(pg).toMatchObject({ short_id: ids.pg.slice(0, 8), used: false, tokens: expect.any(Number) });
    expect(Object.keys(pg.parts).sort()).toEqual(["full_text", "graph", "recency", "stale", "strength", "topic", "vector"]);
    expect(pg.parts.full_text).toBeGreaterThan(0);
    expect(pg.parts.graph).toBeNull();
    expect(pg.gist).toContain("5433");
    // Without explain the answer keeps the spec's shape.
    const plain = await recall({ session_id: "r1b", prompt: "which port does the staging postgres database listen on?", project: "infra" });
    expect(Object.keys(plain).sort()).toEqual(["block", "shown", "turn"]);
  });

  test("a suppressed memory is a near miss with its reason; GET /recall/receipts filters and pages", async () => {
    const again = await recall({ session_id: "r1", prompt: "the staging postgres database port again please", project: "infra" }, "?explain=true");
    const reasons = Object.fromEntries(again.explain.dropped.map((d: { id: string; reason: string }) => [d.id, d.reason]));
    expect(reasons[ids.pg]).toBe("suppression");
    const list = await get("/recall/receipts?session_id=r1");
    expect(list.receipts.map((r: { turn: number }) => r.turn)).toEqual([2, 1]);
    const page1 = await get("/recall/receipts?session_id=r1&limit=1");
    expect(page1.receipts).toHaveLength(1);
    expect(page1.next).toEqual(expect.any(String));
    const page2 = await get(`/recall/receipts?session_id=r1&limit=1&before=${encodeURIComponent(page1.next)}`);
    expect(page2.receipts[0].turn).toBe(1);
    expect(page2.next).toBeNull();
    expect(
      (await get(`/recall/receipts?memory=${ids.pg.slice(0, 8)}`)).receipts.every((r: { injected: { id: string }[] }) =>
        r.injected.some((m) => m.id === ids.pg),
      ),
    ).toBe(true);
    const bad = await fetch(`${srv.url}/recall/receipts?kind=other`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain("kind must be recall or search");
  });

  test("an agent search leaves a receipt with results, score parts and tokens", async () => {
    const res = await fetch(`${srv.url}/search?query=staging%20postgres%20port&limit=1`, { headers: { "x-memsvc-agent": "cursor" } });
    const r = await res.json();
    expect(r.results).toHaveLength(1);
    const [receipt] = (await get("/recall/receipts?kind=search&agent=cursor")).receipts;
    expect(receipt).toMatchObject({ kind: "search", via: "rest", agent: "cursor", prompt: "staging postgres port", budget: null });
    expect(receipt.injected[0].id).toBe(r.results[0].id);
    expect(receipt.injected[0].parts.full_text).toBeGreaterThan(0);
    expect(receipt.tokens).toBe(await countTokens(r.results[0].content));
    // The other postgres memory was past the limit: a near miss.
    expect(receipt.dropped.map((d: { reason: string }) => d.reason)).toContain("limit");
    expect(receipt.session_id).toBeNull();
  });

  test("X-Memsvc-Session puts a search's receipt in that session, beside its recall receipts; a bad one is a 400", async () => {
    await recall({ session_id: "sess-42", prompt: "how are production deploys approved in the workflow?", project: "infra" });
    const res = await fetch(`${srv.url}/search?query=deploy%20approval`, { headers: { "x-memsvc-session": "  sess-42 ", "x-memsvc-agent": "cursor" } });
    expect(res.status).toBe(200);
    const list = await get("/recall/receipts?session_id=sess-42");
    expect(list.receipts.map((r: { kind: string }) => r.kind)).toEqual(["search", "recall"]);
    expect(list.receipts[0]).toMatchObject({ session_id: "sess-42", agent: "cursor", via: "rest", prompt: "deploy approval" });
    // `memsvc why --session` traces both, oldest first; --search keeps the search only.
    const why = async (...args: string[]) => {
      const out: string[] = [];
      const log = console.log;
      const url = process.env.MEMSVC_URL;
      process.env.MEMSVC_URL = srv.url;
      console.log = (line: string) => out.push(line);
      try {
        expect(await runWhy(args)).toBe(0);
      } finally {
        console.log = log;
        if (url === undefined) delete process.env.MEMSVC_URL;
        else process.env.MEMSVC_URL = url;
      }
      return out.join("\n");
    };
    const trace = await why("--session", "sess-42");
    expect(trace).toMatch(/recall {2}session sess-42, turn 1[\s\S]*search \(rest\) {2}session sess-42, cursor[\s\S]*query: deploy approval/);
    const searches = await why("--session", "sess-42", "--search");
    expect(searches).toContain("search (rest)  session sess-42");
    expect(searches).not.toContain("recall  session");
    for (const bad of ["   ", "x".repeat(201)]) {
      const r = await fetch(`${srv.url}/search?query=deploy`, { headers: { "x-memsvc-session": bad } });
      expect(r.status).toBe(400);
      expect((await r.json()).error.message).toContain("X-Memsvc-Session header");
    }
  });

  test("used: ids a receipt injected count once; others are refused", async () => {
    const first = await postJson(`${srv.url}/recall/used`, { session_id: "r1", ids: [ids.pg, ids.vite] });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ used: [ids.pg], already: [], not_injected: [ids.vite] });
    const second = await (await postJson(`${srv.url}/recall/used`, { session_id: "r1", ids: [ids.pg] })).json();
    expect(second).toEqual({ used: [], already: [ids.pg], not_injected: [] });
    const [receipt] = (await get(`/recall/receipts?session_id=r1&memory=${ids.pg}`)).receipts;
    expect(receipt.injected.find((m: { id: string }) => m.id === ids.pg).used).toBe(true);
    const sessions = await get("/recall/sessions");
    const r1 = sessions.sessions.find((x: { session_id: string }) => x.session_id === "r1");
    expect(r1).toMatchObject({ prompts: 2, used: 1 });
    expect(r1.tokens).toBeGreaterThan(0);
  });
});

describe("use detected without a receipt: the session's shown state decides", () => {
  const usedCount = async (server: TestServer, id: string) =>
    (await dbRow<{ n: number }>(server.services, "SELECT used_count AS n FROM memories WHERE id = ?", [id]))!.n;
  const used = async (server: TestServer, body: unknown) => {
    const r = await postJson(`${server.url}/recall/used`, body);
    expect(r.status).toBe(200);
    return r.json();
  };

  test("recall.receipts false: a shown memory's detected use counts once; unshown ids and other sessions are refused", async () => {
    const off = await startServer({ config: { recall: { receipts: false } } });
    try {
      const a = (await postJson(`${off.url}/ingest`, { content: "The billing worker retries failed Stripe webhooks every 5 minutes.", project: "pay" })).json();
      const b = (await postJson(`${off.url}/ingest`, { content: "The design system uses Tailwind with a custom colour palette.", project: "web" })).json();
      const [ma, mb] = [(await a).id as string, (await b).id as string];
      const r = await (
        await postJson(`${off.url}/recall-index?explain=true`, {
          session_id: "off1",
          prompt: "how often does the billing worker retry stripe webhooks?",
          project: "pay",
        })
      ).json();
      expect(r.shown).toContain(ma);
      expect(r.explain).toBeNull();
      expect((await (await fetch(`${off.url}/recall/receipts`)).json()).receipts).toEqual([]);
      expect(await used(off, { session_id: "off1", ids: [ma, mb] })).toEqual({ used: [ma], already: [], not_injected: [mb] });
      expect(await usedCount(off, ma)).toBe(1);
      // Reported again (a second capture of the same transcript): the showing counted already.
      expect(await used(off, { session_id: "off1", ids: [ma] })).toEqual({ used: [], already: [ma], not_injected: [] });
      expect(await used(off, { session_id: "other", ids: [ma] })).toEqual({ used: [], already: [], not_injected: [ma] });
      expect(await usedCount(off, ma)).toBe(1);
      // A reset forgets what the session was shown: nothing left to count against.
      await postJson(`${off.url}/recall-index`, { session_id: "off1", reset: true });
      expect(await used(off, { session_id: "off1", ids: [ma] })).toEqual({ used: [], already: [], not_injected: [ma] });
    } finally {
      await off.stop();
    }
  });

  test("receipts pruned: the session's shown state still counts a use, and one the receipt counted is not counted twice", async () => {
    const p1 = await recall({ session_id: "pr1", prompt: "which port does the staging postgres database listen on?", project: "infra" });
    expect(p1.shown).toContain(ids.pg);
    const p2 = await recall({ session_id: "pr2", prompt: "which port does the staging postgres database listen on?", project: "infra" });
    expect(p2.shown).toContain(ids.pg);
    const before = await usedCount(srv, ids.pg);
    expect(await used(srv, { session_id: "pr1", ids: [ids.pg] })).toEqual({ used: [ids.pg], already: [], not_injected: [] });
    await get("/recall/receipts"); // flushes the receipts waiting to be written
    await dbRows(srv.services, "DELETE FROM recall_receipts WHERE session_id IN ('pr1', 'pr2')");
    // pr1's use was counted on its receipt, which is gone: the shown state remembers it.
    expect(await used(srv, { session_id: "pr1", ids: [ids.pg] })).toEqual({ used: [], already: [ids.pg], not_injected: [] });
    // pr2's receipt went before any use: its shown state counts it.
    expect(await used(srv, { session_id: "pr2", ids: [ids.pg, ids.vite] })).toEqual({ used: [ids.pg], already: [], not_injected: [ids.vite] });
    expect(await usedCount(srv, ids.pg)).toBe(before + 2);
  });
});

describe("feedback", () => {
  test("wrong keeps a memory out of the next identical prompt's block at once; a rewrite settles it", async () => {
    const prompt = "what is the production deploy workflow and its approval?";
    const before = await recall({ session_id: "f1", prompt, project: "infra" });
    expect(before.shown).toContain(ids.deploy);
    const fb = await postJson(`${srv.url}/feedback`, { id: ids.deploy.slice(0, 8), kind: "wrong", note: "we moved to Argo CD" });
    expect(fb.status).toBe(200);
    expect(await fb.json()).toMatchObject({ id: ids.deploy, kind: "wrong" });
    const after = await recall({ session_id: "f2", prompt, project: "infra" }, "?explain=true");
    expect(after.shown).not.toContain(ids.deploy);
    expect(after.explain.dropped.find((d: { id: string }) => d.id === ids.deploy)?.reason).toBe("feedback");
    const patched = await fetch(`${srv.url}/memory`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: ids.deploy, content: "Production deploys run through Argo CD with a manual approval in the workflow." }),
    });
    expect(patched.status).toBe(200);
    expect((await recall({ session_id: "f3", prompt, project: "infra" })).shown).toContain(ids.deploy);
  });

  test("outdated is a stale mark with the note in the block; bad kinds are refused", async () => {
    await postJson(`${srv.url}/feedback`, { id: ids.vite, kind: "outdated", note: "we build with rsbuild now" });
    const r = await recall({ session_id: "f4", prompt: "how is the react frontend built and served?", project: "web" });
    expect(r.block).toContain("may be outdated: reported outdated: we build with rsbuild now");
    const bad = await postJson(`${srv.url}/feedback`, { id: ids.vite, kind: "meh" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain("kind must be one of wrong, outdated, useful or irrelevant");
    const missing = await postJson(`${srv.url}/feedback`, { id: "ffffffff", kind: "wrong" });
    expect(missing.status).toBe(404);
  });
});
