import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportAll, feedbackMarks, importAll, reviewMemory } from "../../../../src/core/memories";
import { ingestMemory } from "../../../../src/core/ingest";
import { feedbackFromAnywhere, searchWithReceipt } from "../../../../src/core/receipts";
import { recallIndex } from "../../../../src/core/recall";
import { makeServices, type TestServices } from "../../../helpers/services";

const open: TestServices[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});
const services = (opts: Parameters<typeof makeServices>[0] = {}) => {
  const s = makeServices(opts);
  open.push(s);
  return s;
};

const PROMPT = "which port does the staging postgres database listen on behind pgbouncer?";

describe("feedback", () => {
  test("export and import carry every feedback event with its note: the imported store keeps the marks", async () => {
    const s = services();
    const pg = (await ingestMemory(s, { content: "The staging Postgres database listens on port 5433 behind pgbouncer.", project: "infra" })).id!;
    const vite = (await ingestMemory(s, { content: "The React frontend is built with Vite and served by nginx.", project: "web" })).id!;
    await feedbackFromAnywhere(s, { id: pg, kind: "wrong", note: "moved to 5434" }, "cli");
    await feedbackFromAnywhere(s, { id: vite, kind: "outdated", note: "rsbuild now" }, "cli");
    await feedbackFromAnywhere(s, { id: vite, kind: "irrelevant", prompt: "how do we cook onions slowly?" }, "cli");
    const file = join(mkdtempSync(join(tmpdir(), "memsvc-fb-")), "export.jsonl");
    await exportAll(s.storage, s.config.paths.identity, file, { vectors: true });
    const events = readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((r) => r.kind === "event");
    expect(events.map((e) => e.event).sort()).toEqual(["irrelevant", "outdated", "wrong"]);
    expect(JSON.parse(events.find((e) => e.event === "wrong").detail)).toMatchObject({ note: "moved to 5434", source: "cli" });

    const t = services();
    await importAll(t, file);
    const marks = await feedbackMarks(t);
    expect(marks.get(pg)?.wrong?.note).toBe("moved to 5434");
    expect(marks.get(vite)?.outdated?.note).toBe("rsbuild now");
    expect(marks.get(vite)?.irrelevant).toHaveLength(1);
    const r = await recallIndex(t, { session_id: "after-import", prompt: PROMPT, project: "infra" });
    expect("shown" in r && r.shown).not.toContain(pg);
  });

  test("retire keeps a memory out of recall and search until unretired; review settles wrong", async () => {
    const s = services();
    const pg = (await ingestMemory(s, { content: "The staging Postgres database listens on port 5433 behind pgbouncer.", project: "infra" })).id!;
    const shown = async (session: string) => {
      const r = await recallIndex(s, { session_id: session, prompt: PROMPT, project: "infra" });
      return "shown" in r ? r.shown : [];
    };
    expect(await shown("a")).toEqual([pg]);
    await reviewMemory(s, { id: pg, action: "retire" }, "page");
    expect(await shown("b")).toEqual([]);
    expect((await searchWithReceipt(s, { query: "staging postgres port" }, { via: "rest", agent: null })).results.map((x) => x.id)).not.toContain(pg);
    await reviewMemory(s, { id: pg, action: "unretire" }, "page");
    expect(await shown("c")).toEqual([pg]);
    await feedbackFromAnywhere(s, { id: pg, kind: "wrong" }, "mcp");
    expect(await shown("d")).toEqual([]);
    await reviewMemory(s, { id: pg, action: "review" }, "page");
    expect(await shown("e")).toEqual([pg]);
    await expect(reviewMemory(s, { id: pg, action: "delete" }, "page")).rejects.toThrow("action must be one of retire, unretire, review");
  });

  test("receipts off: recall answers the same and leaves none; hash-only keeps no prompt text", async () => {
    const off = services({ config: { recall: { receipts: false } } });
    await ingestMemory(off, { content: "The staging Postgres database listens on port 5433 behind pgbouncer.", project: "infra" });
    const r = await recallIndex(off, { session_id: "x", prompt: PROMPT, project: "infra" }, { explain: true });
    expect(r).toMatchObject({ shown: [expect.any(String)], explain: null });
    expect(await off.storage.receipts.listReceipts({ limit: 10 })).toEqual([]);

    const hashed = services({ config: { recall: { receiptPrompt: "hash" } } });
    await ingestMemory(hashed, { content: "The staging Postgres database listens on port 5433 behind pgbouncer.", project: "infra" });
    const h = await recallIndex(hashed, { session_id: "y", prompt: PROMPT, project: "infra" }, { explain: true });
    expect(h.explain).toMatchObject({ prompt: null, prompt_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const id = "shown" in h ? h.shown[0] : "";
    await expect(feedbackFromAnywhere(hashed, { id, kind: "irrelevant" }, "cli")).rejects.toThrow(
      'keeps only its prompt\'s hash (recall.receiptPrompt "hash")',
    );
  });
});
