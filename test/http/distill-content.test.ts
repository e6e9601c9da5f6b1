import { describe, expect, test } from "bun:test";
import { memoriesReply } from "../helpers/fake-llm";
import { distillHarness, storedText, TRANSCRIPT } from "../helpers/distill-server";
import { postJson } from "../helpers/server";

// No test here times the model out: the short default (kept short for distill.test.ts's hang tests)
// turned a busy machine into 503s here.
const h = distillHarness({ timeoutMs: 30_000 });
const post = (body: unknown) => h.post(body);
const sql = <T>(q: string, ...args: any[]) => h.sql<T>(q, ...args);
const count = (table: string) => h.count(table);

describe("huge answers", () => {
  test("hundreds of memories in one reply: the first 40 are taken", async () => {
    const many = Array.from({ length: 500 }, (_, i) => ({
      content: `Service number ${i} of the fleet, alpha${i}beta, listens on port ${10000 + i} in the eu-west cluster ${"z".repeat(i % 7)}${i}.`,
      memory_type: "knowledge",
    }));
    h.fake.script(memoriesReply(...many));
    const r = await post({ text: TRANSCRIPT });
    expect(r.status).toBe(201);
    const j = (await r.json()) as any;
    expect(j.distilled).toBeLessThanOrEqual(40);
    expect(j.distilled).toBeGreaterThan(0);
    expect(h.srv.services.logs.some((l) => l.message.includes("proposed 500 memories for one chunk; keeping the first 40"))).toBe(true);
    // Taken means the first 40 in the model's order: every stored memory (near-duplicates merge) is one of them.
    const stored = (await sql<{ content: string }>("SELECT content FROM memories")).map((r) => Number(/Service number (\d+) /.exec(r.content)?.[1]));
    expect(stored).toHaveLength(j.distilled);
    for (const n of stored) expect(n).toBeLessThan(40);
    expect(stored).toContain(0);
  });

  test("a multi-megabyte memory is dropped as too long, echoed back truncated", async () => {
    h.fake.script(
      memoriesReply(`The log says ${"orders export lock wait ".repeat(150_000)}`, "The orders export job holds a share lock nightly at 02:00 UTC."),
    );
    const r = await post({ text: TRANSCRIPT });
    expect(r.status).toBe(201);
    const j = (await r.json()) as any;
    expect(j.distilled).toBe(1);
    expect(j.dropped).toHaveLength(1);
    expect(j.dropped[0].reason).toBe("too long");
    expect(j.dropped[0].content.length).toBeLessThanOrEqual(301);
  });
});

describe("long transcripts", () => {
  test("are distilled chunk by chunk, each prompt within the model's context, cut between messages", async () => {
    const messages = Array.from({ length: 40 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: `Turn ${i}: ${"the orders table migration moves rows in batches. ".repeat(8)}END${i}`,
    }));
    const r = await post({ messages });
    expect(r.status).toBe(201);
    expect(h.fake.requests.length).toBeGreaterThan(1);
    const prompts = h.fake.requests.map((q) => q.body.messages.map((m: any) => m.content).join(""));
    for (const p of prompts) expect(p.length).toBeLessThanOrEqual(8000);
    const all = prompts.join("\n");
    for (let i = 0; i < 40; i++) expect(all).toContain(`END${i}`);
    // No message is cut: each turn's start and end land in the same prompt.
    for (let i = 0; i < 40; i++) expect(prompts.some((p) => p.includes(`Turn ${i}:`) && p.includes(`END${i}`))).toBe(true);
  });
});

describe("raw content and secrets", () => {
  const KEY = "sk-proj-PLANTEDkey0123456789abcdefXYZ";
  const GH = "ghp_PLANTEDgithubTOKEN0123456789abcdef";
  const AWS = "AKIAPLANTED0123ABCDE";
  const PW = "hunter2-PLANTED-pw";
  const SENTENCE = "The violet walrus recited quarterly tax tables backwards at midnight";

  const dbBytes = () => storedText(h.srv.services);

  test("planted secrets never reach the model nor the database; an echoed key is redacted", async () => {
    h.fake.script(
      memoriesReply(
        `The staging deploy uses the OpenAI key ${KEY} from the .env file of the shop repo.`,
        "The staging database is reached through pgbouncer on port 6432 with the shop_app user.",
      ),
    );
    const text = [
      `user: export OPENAI_API_KEY=${KEY} and push with ${GH}`,
      `assistant: aws configure set aws_access_key_id ${AWS}; psql postgres://shop_app:${PW}@db.staging:6432/shop`,
      `user: curl -H "Authorization: Bearer ${KEY}" https://api.example.com; DB_PASSWORD="${PW}"`,
      `assistant: ${SENTENCE}. The staging database is reached through pgbouncer on port 6432.`,
    ].join("\n\n");
    const r = await post({ text, session_id: "secrets", segment_id: "1" });
    expect(r.status).toBe(201);
    const sent = h.fake.receivedText();
    for (const secret of [KEY, GH, AWS, PW]) expect(sent).not.toContain(secret);
    expect(sent).toContain("[REDACTED:");
    expect(sent).toContain(SENTENCE);
    const contents = (await sql<{ content: string }>("SELECT content FROM memories")).map((m) => m.content);
    expect(contents.some((c) => c.includes("[REDACTED:openai-key]"))).toBe(true);
    const bytes = await dbBytes();
    for (const secret of [KEY, GH, AWS, PW]) expect(bytes).not.toContain(secret);
    // The transcript itself is gone: a sentence the model did not echo is nowhere in the file.
    expect(bytes).not.toContain("violet walrus");
    expect(bytes).toContain("pgbouncer");
    expect(h.srv.services.logs.map((l) => l.message).join("\n")).not.toContain("violet walrus");
  });
});

describe("near-duplicates and links", () => {
  const ingest = async (content: string, project = "infra") =>
    ((await (await postJson(`${h.srv.url}/ingest`, { content, project })).json()) as any).id as string;
  const strength = async (id: string) => (await sql<{ strength: number }>("SELECT strength FROM memories WHERE id = ?", id))[0].strength;

  test("a restatement strengthens the existing memory instead of adding a copy", async () => {
    const id = await ingest("The staging database listens on port 5433.");
    h.fake.script(memoriesReply("The staging database runs on port 5433."));
    const j = (await (await post({ text: TRANSCRIPT, project: "infra" })).json()) as any;
    expect(j.ids).toEqual([id]);
    expect(await count("memories")).toBe(1);
    expect(await strength(id)).toBeGreaterThan(1);
    expect((await sql<{ content: string }>("SELECT content FROM memories"))[0].content).toBe("The staging database runs on port 5433.");
  });

  test("a newer version of a fact updates the existing memory (and its vector)", async () => {
    const id = await ingest("The API rate limit for the billing service is 100 requests per minute per tenant.");
    h.fake.script(memoriesReply("The billing service API rate limit was raised to 500 requests per minute per tenant."));
    const j = (await (await post({ text: TRANSCRIPT, project: "infra" })).json()) as any;
    expect(j.ids).toEqual([id]);
    expect(await count("memories")).toBe(1);
    expect((await sql<{ content: string }>("SELECT content FROM memories"))[0].content).toContain("raised to 500");
    const s = (await (await fetch(`${h.srv.url}/search?query=${encodeURIComponent("billing rate limit raised 500")}&project=infra`)).json()) as any;
    expect(s.results[0].id).toBe(id);
    // The corrected text replaced the old one, which stays as a version (GET /memory/history).
    const hist = (await (await fetch(`${h.srv.url}/memory/history?id=${id.slice(0, 8)}`)).json()) as any;
    expect(hist.versions).toEqual([
      expect.objectContaining({ version: 1, reason: "distill", content: "The API rate limit for the billing service is 100 requests per minute per tenant." }),
    ]);
  });

  test("the same words in another project, or a different fact, are stored separately", async () => {
    await ingest("The staging database listens on port 5433.");
    h.fake.script(memoriesReply("The production database listens on port 5432 behind the primary load balancer."));
    await post({ text: TRANSCRIPT, project: "infra" });
    h.fake.script(memoriesReply("The staging database listens on port 5433."));
    await post({ text: TRANSCRIPT, project: "other" });
    expect(await count("memories")).toBe(3);
  });

  test("new memories link to their closest existing memories and to the relationships the model named", async () => {
    const existing = await ingest("The orders table export job runs nightly at 02:00 UTC and holds a share lock.", "shop");
    h.fake.script(
      memoriesReply(
        { content: "Migrations on the orders table hang while the nightly export job holds its share lock.", memory_type: "experience" },
        {
          content: "Run orders table migrations with lock_timeout = 5s so they fail fast instead of blocking deploys.",
          memory_type: "learnings",
          relationships: [
            { to: 0, type: "fixes" },
            { to: existing.slice(0, 8), type: "depends_on" },
          ],
        },
      ),
    );
    const j = (await (await post({ text: TRANSCRIPT, project: "shop" })).json()) as any;
    expect(j.ids).toHaveLength(2);
    const [hang, rule] = j.ids;
    const links = await sql<{ from_id: string; to_id: string; relationship: string }>("SELECT from_id, to_id, relationship FROM links");
    expect(links).toContainEqual({ from_id: hang, to_id: existing, relationship: "related" });
    expect(links).toContainEqual({ from_id: rule, to_id: hang, relationship: "fixes" });
    expect(links).toContainEqual({ from_id: rule, to_id: existing, relationship: "depends_on" });
    // The model was shown the existing memory by short id.
    expect(h.fake.requests[0].body.messages[1].content).toContain(existing.slice(0, 8));
  });
});

test("search answers while a distill waits on the model", async () => {
  await postJson(`${h.srv.url}/ingest`, { content: "The orders export job runs nightly at 02:00 UTC.", project: "shop" });
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  h.fake.script({ wait: gate, then: memoriesReply("The orders migration needs lock_timeout = 5s on staging.") });
  let settled = false;
  const distilling = post({ text: TRANSCRIPT, session_id: "hot", segment_id: "1" }).then((r) => {
    settled = true;
    return r;
  });
  while (h.fake.requests.length === 0) await Bun.sleep(5);
  const s = await fetch(`${h.srv.url}/search?query=orders%20export`);
  expect(s.status).toBe(200);
  expect(settled).toBe(false);
  open();
  expect((await distilling).status).toBe(201);
});

test("a transcript needing more model calls than the per-request limit is refused with 413, before any call", async () => {
  const huge = Array.from({ length: 400 }, (_, i) => `user: paragraph ${i} ${"the orders export holds a lock while the migration waits. ".repeat(12)}`).join(
    "\n\n",
  );
  const r = await post({ text: huge, session_id: "huge", segment_id: "1" });
  expect(r.status).toBe(413);
  expect(((await r.json()) as any).error.message).toMatch(/send it as several segments/);
  expect(h.fake.requests.length).toBe(0);
  expect(await count("segments")).toBe(0);
});
