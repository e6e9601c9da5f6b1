import { describe, expect, test } from "bun:test";
import { memoriesReply } from "../helpers/fake-llm";
import { DISTILL_TIMEOUT_MS as TIMEOUT_MS, distillHarness, TRANSCRIPT } from "../helpers/distill-server";
import { dbRows } from "../helpers/engine";
import { postJson, startServer } from "../helpers/server";

const h = distillHarness();
const post = (body: unknown) => h.post(body);
const sql = <T>(q: string, ...args: any[]) => h.sql<T>(q, ...args);
const count = (table: string) => h.count(table);

describe("request validation (400 naming the field)", () => {
  const cases: [string, unknown, RegExp][] = [
    ["neither text nor messages", { session_id: "s" }, /text .*or messages/],
    ["text of the wrong type", { text: 42 }, /text must be a string/],
    ["messages not an array", { messages: "hello" }, /messages must be an array/],
    ["a message without content", { messages: [{ role: "user" }] }, /messages\[0\]\.content must be a string/],
    ["a message without role", { messages: [{ content: "x" }] }, /messages\[0\]\.role must be a string/],
    ["empty text", { text: "   " }, /text is empty/],
    ["session_id of the wrong type", { text: TRANSCRIPT, session_id: 7 }, /session_id must be a string/],
    ["segment_id without session_id", { text: TRANSCRIPT, segment_id: "a" }, /segment_id needs a session_id/],
    ["a session_date that is no date", { text: TRANSCRIPT, session_date: "yesterday" }, /session_date must be an ISO date/],
    ["source_agent of the wrong type", { text: TRANSCRIPT, source_agent: ["x"] }, /source_agent must be a string/],
    ["a body that is not an object", [1, 2], /must be a JSON object/],
  ];
  for (const [name, body, message] of cases) {
    test(name, async () => {
      const r = await post(body);
      expect(r.status).toBe(400);
      const j = (await r.json()) as any;
      expect(j.error.code).toBe("invalid");
      expect(j.error.message).toMatch(message);
      expect(h.fake.requests.length).toBe(0);
    });
  }
});

describe("201 distilled and stored", () => {
  test("text body: ids, distilled, dropped; provenance and session_date stored; privacy ignored", async () => {
    h.fake.script(
      memoriesReply({
        content: "Migrations on the orders table need lock_timeout = 5s, or the staging deploy blocks for minutes.",
        memory_type: "learnings",
        tags: ["postgres", "deploy"],
      }),
    );
    const r = await post({
      text: TRANSCRIPT,
      session_id: "sess-1",
      session_date: "2026-03-14",
      source_agent: "laptop-7",
      source_agent_id: "6f1c1c59-4b8e-4a39-9a51-0d7c1f3a2b10",
      source_domain: "backend",
      project: "shop",
      privacy: "SENSITIVE",
    });
    expect(r.status).toBe(201);
    const j = (await r.json()) as any;
    expect(j).toEqual({ ids: [expect.any(String)], distilled: 1, dropped: [] });
    const m = (await (await fetch(`${h.srv.url}/memory?id=${j.ids[0]}`)).json()) as any;
    expect(m.memory).toMatchObject({
      memory_type: "learnings",
      project: "shop",
      source_agent: "laptop-7",
      source_agent_id: "6f1c1c59-4b8e-4a39-9a51-0d7c1f3a2b10",
      source_domain: "backend",
      source_session: "sess-1",
      created_at: "2026-03-14T00:00:00.000Z",
    });
    expect((await sql<{ privacy: string }>("SELECT privacy FROM memories"))[0].privacy).toBe("WORK");
    expect((await sql<{ tag: string }>("SELECT tag FROM memory_tags ORDER BY weight DESC")).map((t) => t.tag)).toEqual(["shop", "postgres", "deploy"]);
  });

  test("messages body reaches the model as role-labelled turns; source_agent defaults to unknown; date defaults to today", async () => {
    h.fake.script(memoriesReply("The orders table migration needs lock_timeout set to avoid blocking deploys."));
    const sent = Date.now();
    const r = await post({
      messages: [
        { role: "user", content: "Why did the staging deploy hang on the orders migration?" },
        { role: "assistant", content: "It waited on a table lock held by the nightly export job." },
      ],
    });
    expect(r.status).toBe(201);
    const prompt = h.fake.requests[0].body.messages.at(-1).content as string;
    expect(prompt).toContain("user: Why did the staging deploy hang");
    expect(prompt).toContain("assistant: It waited on a table lock");
    expect(h.fake.requests[0].body.model).toBe("fake-distiller");
    const row = (await sql<{ source_agent: string; created_at: number }>("SELECT source_agent, created_at FROM memories"))[0];
    expect(row.source_agent).toBe("unknown");
    // Without session_date the memory is dated when it was written: between the request and now (a day check would flake at midnight UTC).
    expect(row.created_at).toBeGreaterThanOrEqual(sent);
    expect(row.created_at).toBeLessThanOrEqual(Date.now());
  });

  test("content-free fragments come back in dropped as {content, reason} and are not stored", async () => {
    h.fake.script(
      memoriesReply(
        "ok",
        "Thanks, let me check.",
        "",
        "Deploy fixed.",
        '{"exit_code": 0, "stdout": "/usr/lib/x86_64-linux-gnu/libpq.so.5"}\n/usr/local/bin/psql\n$ ls -la /var/lib/postgresql',
        "The nightly export job holds a share lock on the orders table from 02:00 to 02:20 UTC.",
      ),
    );
    const r = await post({ text: TRANSCRIPT });
    expect(r.status).toBe(201);
    const j = (await r.json()) as any;
    expect(j.distilled).toBe(1);
    expect(j.dropped).toEqual([
      { content: "ok", reason: "filler" },
      { content: "Thanks, let me check.", reason: "filler" },
      { content: "", reason: "empty" },
      { content: "Deploy fixed.", reason: "too short" },
      { content: expect.stringContaining("exit_code"), reason: "tool noise" },
    ]);
    expect(await count("memories")).toBe(1);
    expect(h.srv.services.logs.some((l) => l.message.includes("distill dropped (filler)"))).toBe(true);
    // Kept for the nightly log, reasons and previews only.
    expect((await sql<{ reason: string }>("SELECT reason FROM distill_dropped ORDER BY id")).map((r) => r.reason)).toEqual([
      "filler",
      "filler",
      "empty",
      "too short",
      "tool noise",
    ]);
  });

  test("a trivial transcript is not kept for the nightly log (it is raw session text)", async () => {
    await sql("DELETE FROM distill_dropped");
    const r = await post({ text: "ok thanks" });
    expect(r.status).toBe(201);
    expect(await count("distill_dropped")).toBe(0);
  });

  test("model replies in code fences with leading prose are parsed", async () => {
    h.fake.script({
      text: 'Here are the memories:\n```json\n{"memories": [{"content": "The orders table export runs nightly at 02:00 UTC and holds a share lock.", "memory_type": "fact"}]}\n```\nHope this helps!',
    });
    const r = await post({ text: TRANSCRIPT });
    expect(r.status).toBe(201);
    expect((await sql<{ memory_type: string }>("SELECT memory_type FROM memories"))[0].memory_type).toBe("knowledge");
  });

  test("a transcript that is only filler is answered without a model call", async () => {
    const r = await post({ messages: [{ role: "user", content: "ok thanks" }], session_id: "tiny", segment_id: "1" });
    expect(r.status).toBe(201);
    expect(await r.json()).toEqual({ ids: [], distilled: 0, dropped: [{ content: "ok thanks", reason: "filler" }] });
    expect(h.fake.requests.length).toBe(0);
  });
});

describe("deduplication", () => {
  test("segment-exact: a retried segment is skipped, a later segment is not blocked", async () => {
    h.fake.fallback = () =>
      memoriesReply("The orders migration needs lock_timeout = 5s on staging.", "The nightly export job locks the orders table at 02:00 UTC.");
    const first = await post({ text: TRANSCRIPT, session_id: "s1", segment_id: "0-100" });
    expect(first.status).toBe(201);
    const again = await post({ text: TRANSCRIPT, session_id: "s1", segment_id: "0-100" });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ skipped: true, existing_count: 2 });
    expect(h.fake.requests.length).toBe(1);
    h.fake.fallback = () => memoriesReply("Payments webhooks are retried by Stripe for three days with exponential backoff.");
    const later = await post({
      text: "user: how long does Stripe retry webhooks?\n\nassistant: three days, exponential backoff.",
      session_id: "s1",
      segment_id: "100-200",
    });
    expect(later.status).toBe(201);
    expect(await count("memories")).toBe(3);
  });

  test("a segment whose fragments were all dropped is recorded, so its retry is skipped", async () => {
    h.fake.script(memoriesReply("ok", "thanks"));
    expect((await post({ text: TRANSCRIPT, session_id: "s2", segment_id: "a" })).status).toBe(201);
    const again = await post({ text: TRANSCRIPT, session_id: "s2", segment_id: "a" });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ skipped: true, existing_count: 0 });
    expect(h.fake.requests.length).toBe(1);
  });

  test("no segment_id: skipped when any memory of that session exists", async () => {
    h.fake.script(memoriesReply("The orders migration needs lock_timeout = 5s on staging."));
    expect((await post({ text: TRANSCRIPT, session_id: "whole" })).status).toBe(201);
    const again = await post({ text: `${TRANSCRIPT}\n\nuser: one more thing about the export job schedule`, session_id: "whole" });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ skipped: true, existing_count: 1 });
    expect(h.fake.requests.length).toBe(1);
  });

  test("the dedup key is <session_id>#<segment_id>: the same segment_id under another session is distilled", async () => {
    h.fake.fallback = () => memoriesReply("The orders migration needs lock_timeout = 5s on staging.");
    expect((await post({ text: TRANSCRIPT, session_id: "one", segment_id: "0-100" })).status).toBe(201);
    const other = await post({ text: TRANSCRIPT, session_id: "two", segment_id: "0-100" });
    expect(other.status).toBe(201);
    expect(h.fake.requests.length).toBe(2);
    expect((await sql<{ key: string }>("SELECT key FROM segments ORDER BY key")).map((r) => r.key)).toEqual(["one#0-100", "two#0-100"]);
    const again = await post({ text: TRANSCRIPT, session_id: "two", segment_id: "0-100" });
    expect(again.status).toBe(200);
  });

  test("a segment recorded by another process while the model answers is skipped at the write (checked in the transaction)", async () => {
    h.fake.fallback = () => ({ ...memoriesReply("The orders migration needs lock_timeout = 5s on staging."), delayMs: 300 });
    const pending = post({ text: TRANSCRIPT, session_id: "shared", segment_id: "s-1" });
    // The model has the request: the early dedup check is behind us. Another process sharing the file records the segment now.
    while (h.fake.requests.length === 0) await Bun.sleep(5);
    await sql("INSERT INTO segments(key, session_id, memory_count, created_at) VALUES ('shared#s-1', 'shared', 7, 1)");
    const r = await pending;
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ skipped: true, existing_count: 7 });
    expect(await count("memories")).toBe(0);
  });

  test("two concurrent posts of the same segment store it once", async () => {
    h.fake.fallback = () => ({
      ...memoriesReply("The orders migration needs lock_timeout = 5s on staging.", "The export job locks the orders table nightly."),
      delayMs: 150,
    });
    const body = { text: TRANSCRIPT, session_id: "race", segment_id: "seg-1" };
    const [a, b] = await Promise.all([post(body), post(body)]);
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    expect(await count("memories")).toBe(2);
    expect(await count("segments")).toBe(1);
    expect(h.fake.requests.length).toBe(1);
  });
});

describe("503: strict, nothing stored", () => {
  const expectNothingStored = async () => {
    expect(await count("memories")).toBe(0);
    expect(await count("segments")).toBe(0);
    expect(await count("links")).toBe(0);
  };
  const cases: [string, () => void, RegExp][] = [
    ["the model hangs", () => h.fake.script({ hang: true }), /did not answer within/],
    ["the model sends headers then stalls", () => h.fake.script({ stall: true }), /did not answer within/],
    ["the model answers HTTP 500", () => h.fake.script({ status: 500, message: "model crashed" }), /HTTP 500/],
    ["the model answers garbage", () => h.fake.script({ text: "I am sorry, I cannot do that. <|endoftext|> %%%" }), /not JSON/],
    ["the model answers JSON without memories", () => h.fake.script({ json: { facts: ["x"] } }), /without a "memories" list/],
    ["the endpoint is not a chat completion API", () => h.fake.script({ raw: "<html>nginx</html>", contentType: "text/html" }), /language model/],
  ];
  for (const [name, arrange, message] of cases) {
    test(
      name,
      async () => {
        arrange();
        const r = await post({ text: TRANSCRIPT, session_id: "fail", segment_id: "x" });
        expect(r.status).toBe(503);
        expect(((await r.json()) as any).error.message).toMatch(message);
        await expectNothingStored();
        // The client retries the same segment later: it is not skipped.
        h.fake.script(memoriesReply("The orders migration needs lock_timeout = 5s on staging."));
        expect((await post({ text: TRANSCRIPT, session_id: "fail", segment_id: "x" })).status).toBe(201);
      },
      TIMEOUT_MS * 4,
    );
  }

  test("a failure on the second chunk stores nothing from the first", async () => {
    h.fake.script(memoriesReply("The orders migration needs lock_timeout = 5s on staging."), { status: 502 });
    const long = Array.from(
      { length: 12 },
      (_, i) => `user: step ${i} of the migration plan: ${"move the orders rows in batches of ten thousand. ".repeat(12)}`,
    ).join("\n\n");
    const r = await post({ text: long, session_id: "multi", segment_id: "1" });
    expect(r.status).toBe(503);
    expect(h.fake.requests.length).toBe(2);
    await expectNothingStored();
  });

  test("no language model configured: 503 at once, /health says so", async () => {
    const bare = await startServer();
    try {
      const r = await postJson(`${bare.url}/distill`, { text: TRANSCRIPT, session_id: "n", segment_id: "1" });
      expect(r.status).toBe(503);
      expect(((await r.json()) as any).error.message).toMatch(/no language model is configured/);
      expect(((await (await fetch(`${bare.url}/health`)).json()) as any).llm).toBe("not configured");
      expect((await dbRows<{ n: number }>(bare.services, "SELECT count(*) n FROM segments"))[0].n).toBe(0);
    } finally {
      await bare.stop();
    }
  });

  test("/health names provider and model", async () => {
    expect(((await (await fetch(`${h.srv.url}/health`)).json()) as any).llm).toBe(`openai-compatible@${new URL(h.fake.url).host} fake-distiller`);
  });
});
