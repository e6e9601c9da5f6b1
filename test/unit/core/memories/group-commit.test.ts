import { afterEach, describe, expect, test } from "bun:test";
import { ingestMemory } from "../../../../src/core/ingest";
import type { Storage } from "../../../../src/core/storage";
import { NoteGenerator } from "../../../../bench/lib/corpus";
import { dbRow, dbRows, onSqlite } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

// Concurrent ingests share one transaction on SQLite (core/memories/group-commit.ts).
// What each stores must be what one transaction per ingest, in the same order,
// stores. On PostgreSQL they run in parallel (see the test).

const opened: TestServices[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
const services = () => {
  const s = makeServices();
  opened.push(s);
  return s;
};

/** Short notes from a small vocabulary: many pairs pass the link threshold, each with several candidates. */
const notes = (n: number, seed = 3) => {
  const g = new NoteGenerator(seed);
  const svc = ["billing api", "checkout worker", "search gateway"];
  const err = ["timeout errors", "connection resets", "stale cache reads"];
  const fix = ["raising the pool limit", "adding a retry", "pinning the client version", "restarting the pod"];
  return Array.from({ length: n }, (_, i) => ({
    content: `The ${svc[i % 3]} showed ${err[(i >> 1) % 3]} on staging, fixed by ${fix[(i >> 2) % 4]} (${g.note().content.split(" ").slice(0, 3).join(" ")}).`,
    project: i % 4 === 0 ? "shop" : "web",
    memoryType: "experience",
  }));
};

/** Counts the transactions opened through `s.storage` (the group commit opens them there). */
function countTransactions(s: TestServices): { n: number } {
  const counter = { n: 0 };
  const storage = s.storage as Storage & { transaction: Storage["transaction"] };
  const original = storage.transaction.bind(storage);
  storage.transaction = (fn) => {
    counter.n++;
    return original(fn);
  };
  return counter;
}

/** Every link as from-content, to-content, weight, in a stable order. */
const linksByContent = (s: TestServices) =>
  dbRows<{ a: string; b: string; w: number }>(
    s,
    "SELECT f.content a, t.content b, l.weight w FROM links l JOIN memories f ON f.id = l.from_id JOIN memories t ON t.id = l.to_id ORDER BY a, b",
  );

describe("group commit of concurrent ingests", () => {
  test("concurrent ingests store the same rows and links as one-by-one ingests in the same order", async () => {
    const batch = notes(60);
    const grouped = services();
    const transactions = countTransactions(grouped);
    const results = await Promise.all(batch.map((n) => ingestMemory(grouped, { content: n.content, project: n.project, memory_type: n.memoryType })));
    expect(results.every((r) => r.id !== null)).toBe(true);
    if (onSqlite) {
      // Grouped for real: fewer transactions than ingests.
      expect(transactions.n).toBeLessThan(batch.length);
      expect(grouped.index.size).toBe(batch.length);
    }

    const counts = (s: TestServices) =>
      dbRow<{ l: number; t: number }>(s, "SELECT (SELECT sum(link_count) FROM memories) l, (SELECT count(*) FROM memory_tags) t");
    if (!onSqlite) {
      // PostgreSQL runs the ingests in parallel transactions (each its own
      // backend), and one does not see another's uncommitted memory: which
      // pairs link depends on the interleaving, so no serial order reproduces
      // it. What must hold: every memory stored, link counts that match the links.
      expect((await dbRow<{ n: number }>(grouped, "SELECT count(*) n FROM memories"))!.n).toBe(batch.length);
      const [{ l }] = [(await counts(grouped))!];
      const ends = (await dbRow<{ n: number }>(grouped, "SELECT count(*) * 2 - count(*) FILTER (WHERE from_id = to_id) n FROM links"))!.n;
      expect(l).toBe(ends);
      expect(ends).toBeGreaterThan(20);
      return;
    }
    // The same memories one at a time, in the order the grouped store wrote them.
    const order = await dbRows<{ content: string; project: string; memory_type: string }>(
      grouped,
      "SELECT content, project, memory_type FROM memories ORDER BY seq",
    );
    const single = services();
    for (const m of order) await ingestMemory(single, { content: m.content, project: m.project, memory_type: m.memory_type });

    const expected = await linksByContent(single);
    // Not vacuous: these notes share projects and services, so they link.
    expect(expected.length).toBeGreaterThan(20);
    expect(await linksByContent(grouped)).toEqual(expected);
    expect(await counts(grouped)).toEqual((await counts(single))!);
  });

  test("two concurrent ingests of one source_session store it once", async () => {
    const s = services();
    const results = await Promise.all([1, 2, 3].map((i) => ingestMemory(s, { content: `session note ${i} about the deploy`, source_session: "sess-1" })));
    expect(results.filter((r) => r.id !== null).length).toBe(1);
    expect(results.filter((r) => r.id === null).length).toBe(2);
    expect((await dbRow<{ n: number }>(s, "SELECT count(*) n FROM memories WHERE source_session = 'sess-1'"))!.n).toBe(1);
  });

  test.skipIf(!onSqlite)("a write that fails in a group rolls back alone; the others are stored", async () => {
    const s = services();
    const tx = await s.storage.transaction(async (t) => t);
    const insert = tx.memories.insertMemories.bind(tx.memories);
    (tx.memories as { insertMemories: typeof insert }).insertMemories = async (rows) => {
      const seqs = await insert(rows);
      if (rows.some((r) => r.content.includes("poison"))) throw new Error("planted failure after the rows were written");
      return seqs;
    };
    const contents = ["first note on the cache", "second note on the cache", "poison note on the cache", "fourth note on the cache", "fifth note on the cache"];
    const results = await Promise.allSettled(contents.map((content) => ingestMemory(s, { content, project: "web" })));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
    const rows = await dbRows<{ content: string }>(s, "SELECT content FROM memories ORDER BY seq");
    expect(rows.map((r) => r.content)).toEqual(contents.filter((c) => !c.includes("poison")));
    // Nothing of the failed one is left: no vector, no full-text row, no tag, no link, no index entry.
    expect(await dbRow(s, "SELECT (SELECT count(*) FROM memory_vec) v, (SELECT count(*) FROM memories_fts) f, (SELECT count(*) FROM memory_tags) t")).toEqual({
      v: 4,
      f: 4,
      t: 4,
    });
    expect(
      (await dbRow<{ n: number }>(
        s,
        "SELECT count(*) n FROM links l WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = l.from_id) OR NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = l.to_id)",
      ))!.n,
    ).toBe(0);
    expect(s.index.size).toBe(4);
  });

  test.skipIf(!onSqlite)("a group whose commit fails acknowledges nothing and leaves the live index as it was", async () => {
    const s = services();
    await ingestMemory(s, { content: "an earlier note on the cache", project: "web" });
    const storage = s.storage as Storage & { transaction: Storage["transaction"] };
    const original = storage.transaction.bind(storage);
    storage.transaction = (fn) =>
      original(async (tx) => {
        await fn(tx);
        throw new Error("planted failure at commit");
      });
    const results = await Promise.allSettled([1, 2, 3].map((i) => ingestMemory(s, { content: `note ${i} on the cache layer`, project: "web" })));
    expect(results.every((r) => r.status === "rejected")).toBe(true);
    expect((await dbRow<{ n: number }>(s, "SELECT count(*) n FROM memories"))!.n).toBe(1);
    expect(s.index.size).toBe(1);
    // The index answers as before: only the earlier note.
    storage.transaction = original;
    const again = await ingestMemory(s, { content: "a later note on the cache", project: "web" });
    expect(again.id).not.toBeNull();
    expect(s.index.size).toBe(2);
  });
});
