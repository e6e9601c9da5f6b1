import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { memoriesReply, startFakeLlm, type FakeLlm } from "../helpers/fake-llm";
import { DISTILL_TIMEOUT_MS, TRANSCRIPT } from "../helpers/distill-server";
import { dbRows, onSqlite } from "../helpers/engine";
import { postJson, startServer, type TestServer } from "../helpers/server";

// Two servers, each with its own Services (connection or pool, per-process
// key locks), over one database: one SQLite file (the same home), or one
// PostgreSQL schema (two homes). Their per-process locks cannot see each
// other, so only the segment key's unique constraint can keep a segment from
// being stored twice.
let fake: FakeLlm;
let a: TestServer;
let b: TestServer;

beforeAll(async () => {
  fake = startFakeLlm();
  const llm = { baseURL: fake.baseURL, model: "fake-distiller", timeoutMs: DISTILL_TIMEOUT_MS * 4, contextChars: 8000 };
  a = await startServer({ config: { llm } });
  b = onSqlite
    ? await startServer({ home: a.services.config.home, config: { llm } })
    : await startServer({ config: { llm }, env: { MEMSVC_DATABASE_SCHEMA: a.services.config.database.schema } });
});

afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await fake?.stop();
});

const count = async (table: string) => (await dbRows<{ n: number }>(a.services, `SELECT count(*) AS n FROM ${table}`))[0].n;

describe("/distill over one database from two servers", () => {
  test("the same segment posted to both at once is stored once; the other answers as a duplicate with the stored count", async () => {
    // Both model calls are held until both servers are past their early dedup check.
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    fake.fallback = () => ({
      wait: gate,
      then: memoriesReply("The orders migration needs lock_timeout = 5s on staging.", "The export job locks the orders table nightly."),
    });
    const body = { text: TRANSCRIPT, session_id: "race", segment_id: "seg-1" };
    const both = Promise.all([postJson(`${a.url}/distill`, body), postJson(`${b.url}/distill`, body)]);
    while (fake.requests.length < 2) await Bun.sleep(5);
    open();
    const [ra, rb] = await both;
    const answers = [
      { status: ra.status, body: (await ra.json()) as any },
      { status: rb.status, body: (await rb.json()) as any },
    ].sort((x, y) => x.status - y.status);
    expect(answers.map((x) => x.status)).toEqual([200, 201]);
    expect(answers[1].body.distilled).toBe(2);
    expect(answers[0].body).toEqual({ skipped: true, existing_count: 2 });
    expect(await count("memories")).toBe(2);
    expect(await count("segments")).toBe(1);
    // A later post to either server is a plain dedup hit, without a model call.
    const before = fake.requests.length;
    const again = await postJson(`${b.url}/distill`, body);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ skipped: true, existing_count: 2 });
    expect(fake.requests.length).toBe(before);
  });

  test("different segments of one session posted to both at once are both stored", async () => {
    fake.reset();
    fake.fallback = (req) => memoriesReply(req.raw.includes("seg-a") ? "Segment A: the deploy runner retries twice." : "Segment B: the cache warms on boot.");
    const [ra, rb] = await Promise.all([
      postJson(`${a.url}/distill`, { text: `${TRANSCRIPT} seg-a`, session_id: "two-segs", segment_id: "a" }),
      postJson(`${b.url}/distill`, { text: `${TRANSCRIPT} seg-b`, session_id: "two-segs", segment_id: "b" }),
    ]);
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect((await dbRows<{ key: string }>(a.services, "SELECT key FROM segments WHERE session_id = 'two-segs' ORDER BY key")).map((r) => r.key)).toEqual([
      "two-segs#a",
      "two-segs#b",
    ]);
  });
});
