import { afterEach, describe, expect, test } from "bun:test";
import { RECEIPT_WRITE_SLICE } from "../../../../src/core/receipts/tuning";
import { flushReceipts, recordReceipt, type PendingReceipt } from "../../../../src/core/receipts/writer";
import { makeServices, type TestServices } from "../../../helpers/services";

const open: TestServices[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

const receipt = (s: TestServices, n: number): PendingReceipt => ({
  id: crypto.randomUUID(),
  at: s.now() + n,
  kind: "search",
  via: "rest",
  sessionId: null,
  turn: null,
  agent: "writer-test",
  project: null,
  rawPrompt: `where does the staging database listen, question ${n}?`,
  countText: `The staging Postgres database listens on port ${5400 + n}.`,
  tokens: 0,
  budget: null,
  injected: [
    { id: `m-${n}`, score: 0.5, parts: { full_text: 1, vector: null, graph: null, strength: 1, recency: 1, topic: null, stale: 1 }, content: `memory ${n}` },
  ],
  dropped: [],
});

describe("receipt writer", () => {
  test("a flush writes every queued receipt, yielding to the event loop between slices so a request is not held behind the whole batch", async () => {
    const s = makeServices();
    open.push(s);
    // The first flush loads the tokenizer and the secret rules (real waits); the batch after it is all CPU.
    recordReceipt(s, receipt(s, 100));
    await flushReceipts(s);
    const count = RECEIPT_WRITE_SLICE * 4 + 1;
    for (let n = 0; n < count; n++) recordReceipt(s, receipt(s, n));
    // A request arriving once the flush has started: it must run before the flush has written everything.
    let writtenWhenItRan = -1;
    const flushed = flushReceipts(s);
    setImmediate(() => {
      void stored(s).then((rows) => (writtenWhenItRan = rows.length));
    });
    await flushed;
    const rows = await stored(s);
    expect(rows.length).toBe(count + 1);
    expect(rows.every((r) => r.tokens > 0 && r.prompt?.includes("staging database"))).toBe(true);
    expect(writtenWhenItRan).toBeGreaterThanOrEqual(0);
    expect(writtenWhenItRan).toBeLessThan(count + 1);
  });
});

/** The receipts in the store now (the store's read: core's listReceipts would flush first). */
function stored(s: TestServices) {
  return s.storage.receipts.listReceipts({ sessionId: null, agent: null, project: null, kind: null, memoryId: null, before: null, limit: 1000 });
}
