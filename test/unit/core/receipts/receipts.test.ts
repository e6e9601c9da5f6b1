import { afterEach, describe, expect, test } from "bun:test";
import { ingestMemory } from "../../../../src/core/ingest";
import { feedbackCounts } from "../../../../src/core/memories";
import { feedbackFromAnywhere, flushReceipts, listReceipts, searchWithReceipt } from "../../../../src/core/receipts";
import { expireRecallSessions, recallIndex } from "../../../../src/core/recall";
import { makeServices, type TestServices } from "../../../helpers/services";

const DAY = 86_400_000;
const open: TestServices[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

function services(recall: Record<string, unknown> = {}) {
  let t = Date.parse("2026-03-10T09:00:00Z");
  const s = makeServices({ now: () => t, config: { recall } });
  open.push(s);
  return { s, advance: (ms: number) => (t += ms) };
}

const PROMPT = "which port does the staging postgres database listen on behind pgbouncer?";
const PG = "The staging Postgres database listens on port 5433 behind pgbouncer.";

const receipts = async (s: TestServices, q: Record<string, unknown> = {}) => (await listReceipts(s, { limit: 200, ...q })).receipts;

describe("receipts are bounded and go with their session", () => {
  test("recall.receiptMax keeps the newest receipts only", async () => {
    const { s, advance } = services({ receiptMax: 3 });
    for (let i = 1; i <= 5; i++) {
      await recallIndex(s, { session_id: `max-${i}`, prompt: PROMPT, project: "infra" });
      // Pruning runs at most once a minute (a slow engine may flush between prompts): let each flush prune.
      advance(61_000);
    }
    await flushReceipts(s);
    expect((await receipts(s)).map((r) => r.session_id)).toEqual(["max-5", "max-4", "max-3"]);
  });

  test("recall.receiptDays drops receipts older than that many days", async () => {
    // Agent searches: receipts of no session, so only the days bound can remove them.
    const { s, advance } = services({ receiptDays: 1 });
    const search = (query: string) => searchWithReceipt(s, { query }, { via: "rest", agent: "cursor" });
    await search("staging postgres port first");
    await flushReceipts(s);
    advance(DAY / 2);
    await search("staging postgres port second");
    await flushReceipts(s);
    expect(await receipts(s, { kind: "search" })).toHaveLength(2);
    advance(DAY);
    await search("staging postgres port third");
    await flushReceipts(s);
    expect((await receipts(s, { kind: "search" })).map((r) => r.prompt)).toEqual(["staging postgres port third", "staging postgres port second"]);
  });

  test("a session's receipts are deleted with its recall state", async () => {
    const { s, advance } = services();
    await ingestMemory(s, { content: PG, project: "infra" });
    await recallIndex(s, { session_id: "old", prompt: PROMPT, project: "infra" });
    advance(60_000);
    await recallIndex(s, { session_id: "new", prompt: PROMPT, project: "infra" });
    await flushReceipts(s);
    expect((await receipts(s)).map((r) => r.session_id).sort()).toEqual(["new", "old"]);
    // Past the sessions bound, the least recently used session goes: its receipts with it.
    expect(await expireRecallSessions(s, { max: 1 })).toBe(1);
    expect((await receipts(s)).map((r) => r.session_id)).toEqual(["new"]);
  });

  test("the prompt is kept redacted and bounded", async () => {
    const { s } = services();
    const secret = "ghp_0123456789abcdefABCDEF0123456789abcd";
    const prompt = `${PROMPT} I pushed with https://${secret}@github.com/acme/shop.git ${"and then the pgbouncer pool restarted again ".repeat(40)}`;
    const r = await recallIndex(s, { session_id: "redact", prompt, project: "infra" }, { explain: true });
    const kept = r.explain!.prompt!;
    expect(kept).toStartWith(PROMPT);
    expect(kept).not.toContain(secret);
    expect(kept.length).toBeLessThanOrEqual(500);
    expect(r.explain!.prompt_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("useful feedback", () => {
  test("counts as a use: used_count, a used event, and the receipt lists it used", async () => {
    const { s } = services();
    const id = (await ingestMemory(s, { content: PG, project: "infra" })).id!;
    const r = await recallIndex(s, { session_id: "useful", prompt: PROMPT, project: "infra" }, { explain: true });
    expect(r.explain!.injected.map((m) => m.id)).toEqual([id]);
    const before = (await s.storage.memories.memoryById(id))!;
    const out = await feedbackFromAnywhere(s, { id: id.slice(0, 8), kind: "useful", receipt: r.explain!.id }, "cli");
    expect(out).toMatchObject({ id, kind: "useful", receipt: r.explain!.id });
    const after = (await s.storage.memories.memoryById(id))!;
    expect(after.usedCount).toBe(before.usedCount + 1);
    expect(after.strength).toBeGreaterThanOrEqual(before.strength);
    const [receipt] = await receipts(s, { session_id: "useful" });
    expect(receipt.injected[0]).toMatchObject({ id, used: true });
    expect((await feedbackCounts(s, 0)).useful).toBe(1);
  });
});
