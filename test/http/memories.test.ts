import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dbRow } from "../helpers/engine";
import { postJson, startServer, type TestServer } from "../helpers/server";

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv.stop();
});

const get = (path: string) => fetch(`${srv.url}${path}`);
const json = async (r: Response) => ({ status: r.status, body: (await r.json()) as any });

function expectError(res: { status: number; body: any }, status: number, message: RegExp) {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toEqual(expect.any(String));
  expect(res.body.error.message).toMatch(message);
}

describe("POST /ingest", () => {
  test("two concurrent ingests of one session store one memory", async () => {
    const sent = [
      postJson(`${srv.url}/ingest`, { content: "Concurrent ingest one: the staging cache is Redis.", source_session: "s-race" }),
      postJson(`${srv.url}/ingest`, { content: "Concurrent ingest two: the staging queue is SQS.", source_session: "s-race" }),
    ];
    const [a, b] = await Promise.all(sent.map(async (r) => json(await r)));
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    expect((await dbRow<{ n: number }>(srv.services, "SELECT count(*) AS n FROM memories WHERE source_session = 's-race'"))!.n).toBe(1);
  });

  test("201 with id and message; legacy type; dedup answers 200 skipped", async () => {
    const a = await json(
      await postJson(`${srv.url}/ingest`, {
        content: "Prefer ripgrep over grep in this repo",
        memory_type: "fact",
        source_session: "s-http-1",
        project: "tools",
      }),
    );
    expect(a.status).toBe(201);
    expect(a.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), message: expect.any(String) });
    const again = await json(await postJson(`${srv.url}/ingest`, { content: "anything", source_session: "s-http-1" }));
    expect(again).toEqual({ status: 200, body: { id: null, skipped: true, existing_count: 1 } });
    const m = await json(await get(`/memory?id=${a.body.id}`));
    expect(m.body.memory.memory_type).toBe("knowledge");
  });

  test("bad bodies are 400 with a message", async () => {
    expectError(
      await json(await fetch(`${srv.url}/ingest`, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" })),
      400,
      /malformed JSON/,
    );
    expectError(await json(await postJson(`${srv.url}/ingest`, [1, 2])), 400, /object/);
    expectError(await json(await postJson(`${srv.url}/ingest`, { content: 7 })), 400, /content/);
    expectError(await json(await postJson(`${srv.url}/ingest`, { content: "x", memory_type: "mood" })), 400, /memory_type/);
    expectError(await json(await postJson(`${srv.url}/ingest`, { content: "x", session_date: "soon" })), 400, /session_date/);
    expectError(await json(await fetch(`${srv.url}/ingest`, { method: "POST" })), 400, /body/);
  });

  test("content over 100,000 characters is a 400 that states the length and the limit; 100,000 is stored (ingest and update)", async () => {
    const over = await json(await postJson(`${srv.url}/ingest`, { content: `Long note: ${"y".repeat(100_000)}` }));
    expect(over.status).toBe(400);
    expect(over.body.error).toEqual({ code: "invalid", message: "content is 100011 characters; the limit is 100000 characters per memory" });
    const at = await json(await postJson(`${srv.url}/ingest`, { content: `Long note: ${"y".repeat(100_000 - 11)}` }));
    expect(at.status).toBe(201);
    const patched = await json(
      await fetch(`${srv.url}/memory?id=${at.body.id}`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: "z".repeat(100_001) }),
      }),
    );
    expect(patched.status).toBe(400);
    expect(patched.body.error.message).toBe("content is 100001 characters; the limit is 100000 characters per memory");
  });

  test("bodies over 25 MB are refused with 413", async () => {
    const big = "x".repeat(25 * 1024 * 1024 + 10);
    const res = await json(await fetch(`${srv.url}/ingest`, { method: "POST", headers: { "content-type": "application/json" }, body: big }));
    expectError(res, 413, /25 MB/);
  });
});

describe("GET /search and /recent", () => {
  test("search answers {query, count, results} with the spec fields", async () => {
    await postJson(`${srv.url}/ingest`, { content: "The CI runner image is ubuntu-24.04 with node 22", project: "ci" });
    const r = await json(await get(`/search?query=${encodeURIComponent("which CI runner image?")}&project=ci`));
    expect(r.status).toBe(200);
    expect(r.body.count).toBe(r.body.results.length);
    expect(r.body.results[0]).toMatchObject({ content: expect.stringContaining("ubuntu"), project: "ci", memory_type: "experience" });
    for (const k of ["id", "score", "effective_strength", "connections", "created_at"]) expect(r.body.results[0]).toHaveProperty(k);
    const strict = await json(await get(`/search?query=${encodeURIComponent("which CI runner image?")}&project=ci&min_score=0.99`));
    expect(strict.status).toBe(200);
    for (const hit of strict.body.results) expect(hit.score).toBeGreaterThanOrEqual(0.99);
    const loose = await json(await get(`/search?query=${encodeURIComponent("which CI runner image?")}&project=ci&min_score=0`));
    expect(loose.body.count).toBe(r.body.count);
  });

  test("search with FTS syntax and 10 KB of text never errors", async () => {
    for (const q of [`"`, "AND", "*", "-x", "a OR", "NEAR(", "日本", "x".repeat(10_000)]) {
      expect((await get(`/search?query=${encodeURIComponent(q)}`)).status).toBe(200);
    }
  });

  test("search and recent reject bad parameters", async () => {
    expectError(await json(await get("/search")), 400, /query/);
    expectError(await json(await get("/search?query=x&limit=lots")), 400, /limit/);
    for (const bad of ["high", "-0.2", "1.01", "NaN", "1e9"])
      expectError(await json(await get(`/search?query=x&min_score=${bad}`)), 400, /min_score must be a number from 0 to 1/);
    expectError(await json(await get("/recent?limit=0")), 400, /limit/);
  });

  test("recent is queryless with default limit 12 and importance scores", async () => {
    for (let i = 0; i < 14; i++) await postJson(`${srv.url}/ingest`, { content: `recent filler memory ${i}`, project: "filler" });
    const r = await json(await get("/recent?project=filler"));
    expect(r.body.results).toHaveLength(12);
    expect(r.body.results[0]).toHaveProperty("score");
    expect(r.body.results[0]).toHaveProperty("connections");
  });
});

describe("GET/PATCH/DELETE /memory", () => {
  test("get by prefix with citation, 404 unknown, 400 missing, 409 ambiguous", async () => {
    const { body } = await json(
      await postJson(`${srv.url}/ingest`, { content: "Tokens rotate every 90 days", source_agent: "box-7", session_date: "2026-10-01" }),
    );
    const short = body.id.slice(0, 8);
    const r = await json(await get(`/memory?id=${short}`));
    expect(r.status).toBe(200);
    expect(r.body.citation).toBe(`(memory ${short}, 2026-10-01, from box-7)`);
    expect(r.body.memory.used_count).toBe(1);
    expectError(await json(await get("/memory?id=deadbeef")), 404, /no memory/);
    expectError(await json(await get("/memory")), 400, /id/);
    expectError(await json(await get("/memory?id=abc")), 400, /8/);
    // A second memory sharing the first 8 characters.
    const twin = `${short}-0000-4000-8000-000000000000`;
    const s = srv.services;
    const [vector] = await s.embedder.embed(["Twin prefix memory"], "document");
    await s.storage.memories.insertMemories([
      {
        id: twin,
        content: "Twin prefix memory",
        memoryType: "knowledge",
        project: null,
        sourceAgent: "test",
        sourceAgentId: null,
        sourceDomain: null,
        sourceSession: null,
        privacy: "WORK",
        createdAt: s.now(),
        updatedAt: s.now(),
        refreshedAt: s.now(),
        strength: 1,
        vector,
        tags: [],
      },
    ]);
    const amb = await json(await get(`/memory?id=${short}`));
    expectError(amb, 409, /several/);
    expect(amb.body.error.candidates).toHaveLength(2);
  });

  test("patch reports changes and re-embeds; delete removes everything", async () => {
    const { body } = await json(await postJson(`${srv.url}/ingest`, { content: "The queue is RabbitMQ", project: "mq" }));
    const p = await json(
      await fetch(`${srv.url}/memory`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: body.id.slice(0, 8), content: "The queue moved to NATS", project: "messaging" }),
      }),
    );
    expect(p.status).toBe(200);
    expect(p.body.changes).toEqual({
      content: { before: "The queue is RabbitMQ", after: "The queue moved to NATS" },
      project: { before: "mq", after: "messaging" },
    });
    const s1 = await json(await get("/search?query=NATS&project=messaging"));
    expect(s1.body.results[0].id).toBe(body.id);
    expectError(
      await json(await fetch(`${srv.url}/memory`, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: body.id }) })),
      400,
      /nothing to update/,
    );
    const d = await json(await fetch(`${srv.url}/memory?id=${body.id}`, { method: "DELETE" }));
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ deleted: true, id: body.id, preview: "The queue moved to NATS" });
    expectError(await json(await get(`/memory?id=${body.id}`)), 404, /no memory/);
    const s2 = await json(await get("/search?query=NATS&project=messaging"));
    expect(s2.body.results).toHaveLength(0);
    expectError(await json(await fetch(`${srv.url}/memory`, { method: "DELETE" })), 400, /id/);
  });
});

describe("routing", () => {
  test("unknown route is a JSON 404; health needs nothing", async () => {
    expectError(await json(await get("/nope")), 404, /no route/);
    const h = await json(await get("/health"));
    expect(h.body).toMatchObject({
      status: "ok",
      version: expect.any(String),
      memories: expect.any(Number),
      links: expect.any(Number),
      db_size_kb: expect.any(Number),
      llm: "not configured",
    });
  });
});
