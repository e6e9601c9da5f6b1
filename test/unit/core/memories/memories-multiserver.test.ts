import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { deleteMemory, fetchMemory, memoryHistory, updateMemory } from "../../../../src/core/memories";
import { ingestMemory } from "../../../../src/core/ingest";
import { onSqlite } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

// Two Services over one store, as two memsvc servers over one database (on
// PostgreSQL: one schema, each with its own pool; on SQLite: one file, as a
// second process on the same laptop): what one writes, the other reads at
// once, because no memory is kept in a server's own memory.
describe("memories written through one server are read through another at once", () => {
  let a: TestServices;
  let b: TestServices;
  beforeAll(async () => {
    a = makeServices();
    b = makeServices({ home: a.config.home });
    await a.storage.ready();
    await b.storage.ready();
  }, 180_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  test("ingested on one, fetched on the other by id and by prefix; the use counted on one is seen by the other", async () => {
    const r = await ingestMemory(a, { content: "The billing worker retries webhooks with exponential backoff.", project: "billing", source_agent: "box-a" });
    if (r.id === null) throw new Error("unexpected skip");
    const got = await fetchMemory(b, r.id.slice(0, 8));
    expect(got.memory).toMatchObject({
      id: r.id,
      content: "The billing worker retries webhooks with exponential backoff.",
      project: "billing",
      source_agent: "box-a",
      used_count: 1,
    });
    expect((await fetchMemory(a, r.id)).memory.used_count).toBe(2);
  });

  test("updated on one: current on the other, with its history; deleted on one: gone on the other", async () => {
    const r = await ingestMemory(a, { content: "Staging uses Redis 6 for the session cache." });
    const id = r.id!;
    await updateMemory(b, { id, content: "Staging uses Valkey 8 for the session cache." });
    expect((await fetchMemory(a, id)).memory.content).toBe("Staging uses Valkey 8 for the session cache.");
    expect((await memoryHistory(a, id)).versions.map((v) => v.content)).toEqual(["Staging uses Redis 6 for the session cache."]);
    await deleteMemory(a, id);
    await expect(fetchMemory(b, id)).rejects.toMatchObject({ code: "not_found" });
  });

  // On SQLite "two servers" are two processes: two connections in one process would deadlock here
  // (one holds the file's write lock across an await while the other's busy wait blocks the event
  // loop). test/unit/core/memories/memories.test.ts covers the race within one server.
  test.skipIf(onSqlite)("one source session sent to both at once is stored once (PostgreSQL: two pools, one advisory lock)", async () => {
    const results = await Promise.all([
      ingestMemory(a, { content: "Session race one: the deploy bot posts to the releases channel.", source_session: "multi-race" }),
      ingestMemory(b, { content: "Session race two: the deploy bot tags the commit.", source_session: "multi-race" }),
    ]);
    expect(results.filter((r) => r.id !== null)).toHaveLength(1);
    expect(results.find((r) => r.id === null)).toMatchObject({ skipped: true, existing_count: 1 });
  });
});
