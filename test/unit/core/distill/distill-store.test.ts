import { afterEach, describe, expect, test } from "bun:test";
import { dbRow, dbRows, onPostgres } from "../../../helpers/engine";
import { makeServices, type TestServices, type TestServicesOptions } from "../../../helpers/services";

// DistillStore on whichever engine the run uses (MEMSVC_TEST_ENGINE), memory
// rows written with plain SQL both engines speak.
const open: TestServices[] = [];
function services(opts: TestServicesOptions = {}): TestServices {
  const s = makeServices(opts);
  open.push(s);
  return s;
}
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

/** A second Services over the same database: on PostgreSQL another pool on the same schema. */
function sameStore(s: TestServices): TestServices {
  return services(onPostgres ? { env: { MEMSVC_DATABASE_SCHEMA: s.config.database.schema } } : { home: s.config.home });
}

async function addMemory(s: TestServices, id: string, content: string, project: string | null, vector?: number[]): Promise<number> {
  await dbRows(
    s,
    "INSERT INTO memories(id, content, memory_type, project, source_agent, created_at, updated_at, refreshed_at, strength) VALUES (?, ?, 'knowledge', ?, 'test', 1, 1, 1, 1.5)",
    [id, content, project],
  );
  const { seq } = (await dbRow<{ seq: number }>(s, "SELECT seq FROM memories WHERE id = ?", [id]))!;
  if (vector) {
    if (onPostgres) await dbRows(s, "INSERT INTO memory_vec(seq, embedding) VALUES (?, ?::vector)", [seq, `[${vector.join(",")}]`]);
    else s.store.sqlite.query("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)").run(BigInt(seq), new Float32Array(vector));
  }
  return seq;
}

const unit = (i: number) => Array.from({ length: 384 }, (_, k) => (k === i ? 1 : 0));

describe("segment keys", () => {
  test("a claim inserts the key once; the count is set by the claiming transaction", async () => {
    const s = services();
    expect(await s.storage.distill.segmentCount("sess#1")).toBeNull();
    await s.storage.transaction(async (tx) => {
      expect(await tx.distill.claimSegment("sess#1", "sess", 10)).toBe(true);
      await tx.distill.setSegmentCount("sess#1", 3);
    });
    expect(await s.storage.distill.segmentCount("sess#1")).toBe(3);
    expect(await s.storage.transaction((tx) => tx.distill.claimSegment("sess#1", "sess", 11))).toBe(false);
    expect(await dbRows(s, "SELECT key, session_id, memory_count, created_at FROM segments")).toEqual([
      { key: "sess#1", session_id: "sess", memory_count: 3, created_at: 10 },
    ]);
  });

  test("a rolled-back claim leaves no key behind", async () => {
    const s = services();
    await expect(
      s.storage.transaction(async (tx) => {
        await tx.distill.claimSegment("sess#2", "sess", 10);
        throw new Error("the model's memories could not be written");
      }),
    ).rejects.toThrow("could not be written");
    expect(await s.storage.distill.segmentCount("sess#2")).toBeNull();
  });

  // Two SQLite connections in one thread cannot contend: the second BEGIN IMMEDIATE would wait
  // (busy_timeout) on the thread that holds the first. test/http/distill-servers.test.ts covers SQLite.
  test.skipIf(!onPostgres)(
    "two stores over one database claim the same key at once: exactly one wins, the other sees its count [PostgreSQL only: one thread cannot hold two contending SQLite transactions]",
    async () => {
      const a = services();
      const b = sameStore(a);
      const attempt = (s: TestServices, n: number) =>
        s.storage.transaction(async (tx) => {
          const won = await tx.distill.claimSegment("race#1", "race", n);
          // Hold the transaction open, as the segment's memory writes would.
          await Bun.sleep(50);
          if (won) await tx.distill.setSegmentCount("race#1", n);
          return { won, count: won ? n : await tx.distill.segmentCount("race#1") };
        });
      // On a PostgreSQL server (each store its own backends) the second INSERT
      // waits on the first's uncommitted key and then inserts nothing; PGlite
      // (local runs) serialises the two, so there it finds the first committed.
      const results = await Promise.all([attempt(a, 4), attempt(b, 7)]);
      expect(results.filter((r) => r.won).length).toBe(1);
      const winner = results.find((r) => r.won)!;
      const loser = results.find((r) => !r.won)!;
      expect(loser.count).toBe(winner.count);
      expect(await dbRows(a, "SELECT count(*) AS n FROM segments")).toEqual([{ n: 1 }]);
    },
  );
});

describe("memories distill reads and merges", () => {
  test("rows by seq, ids by prefix, the merge target", async () => {
    const s = services();
    const one = await addMemory(s, "aaaa1111-0000-4000-8000-000000000001", "first", "shop");
    const two = await addMemory(s, "aaaa2222-0000-4000-8000-000000000002", "second", null);
    const rows = await s.storage.distill.memoriesBySeq([two, one, 999_999]);
    expect(rows.sort((x, y) => x.seq - y.seq)).toEqual([
      { seq: one, id: "aaaa1111-0000-4000-8000-000000000001", content: "first", project: "shop" },
      { seq: two, id: "aaaa2222-0000-4000-8000-000000000002", content: "second", project: null },
    ]);
    expect(await s.storage.distill.memoriesBySeq([])).toEqual([]);
    expect(await s.storage.distill.idsWithPrefix("aaaa", 2)).toEqual(["aaaa1111-0000-4000-8000-000000000001", "aaaa2222-0000-4000-8000-000000000002"]);
    expect(await s.storage.distill.idsWithPrefix("aaaa2222-0000", 2)).toEqual(["aaaa2222-0000-4000-8000-000000000002"]);
    expect(await s.storage.distill.idsWithPrefix("bbbb", 2)).toEqual([]);
    expect(await s.storage.distill.mergeTarget("aaaa1111-0000-4000-8000-000000000001")).toEqual({ seq: one, strength: 1.5 });
    expect(await s.storage.distill.mergeTarget("nope")).toBeNull();
  });

  test("strengthen and rewrite (text and vector together), dropped fragments recorded", async () => {
    const s = services();
    const seq = await addMemory(s, "cccc1111-0000-4000-8000-000000000001", "old text", null, unit(0));
    await s.storage.transaction(async (tx) => {
      await tx.distill.strengthen(seq, 2, 500);
      await tx.distill.recordDropped(600, [
        { reason: "filler", content: "Sure!" },
        { reason: "too short", content: "ok" },
      ]);
    });
    expect(await dbRow(s, "SELECT strength, refreshed_at, updated_at, content FROM memories WHERE seq = ?", [seq])).toEqual({
      strength: 2,
      refreshed_at: 500,
      updated_at: 1,
      content: "old text",
    });
    await s.storage.distill.rewrite(seq, "new text", new Float32Array(unit(5)), 2.5, 700);
    expect(await dbRow(s, "SELECT strength, refreshed_at, updated_at, content FROM memories WHERE seq = ?", [seq])).toEqual({
      strength: 2.5,
      refreshed_at: 700,
      updated_at: 700,
      content: "new text",
    });
    const stored = onPostgres
      ? JSON.parse((await dbRow<{ v: string }>(s, "SELECT embedding::text AS v FROM memory_vec WHERE seq = ?", [seq]))!.v)
      : Array.from(
          new Float32Array(
            (s.store.sqlite.query("SELECT embedding FROM memory_vec WHERE rowid = ?").get(seq) as { embedding: Uint8Array }).embedding.buffer.slice(0),
          ),
        );
    expect(stored.indexOf(1)).toBe(5);
    expect(await dbRows(s, "SELECT at, reason, content FROM distill_dropped ORDER BY id")).toEqual([
      { at: 600, reason: "filler", content: "Sure!" },
      { at: 600, reason: "too short", content: "ok" },
    ]);
  });
});
