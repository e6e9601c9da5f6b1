import { afterEach, expect, test } from "bun:test";
import { deleteMemory, ingestMemory, updateMemory } from "../../src/core/memories";
import { search } from "../../src/core/search";
import { makeServices, type TestServices } from "../helpers/services";

// Two Services on one home are two SQLite connections, exactly as two processes are to SQLite.
const open: TestServices[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});
const pair = () => {
  const a = makeServices();
  const b = makeServices({ home: a.config.home });
  open.push(a, b);
  return [a, b] as const;
};
const idOf = (r: { id: string | null }) => r.id!;

test("another connection's inserts, edits, project moves and deletes reach this index before its next vector search", async () => {
  const [server, other] = pair();
  await ingestMemory(server, { content: "The release train for atlas ships every tuesday", project: "atlas" });
  const id = idOf(await ingestMemory(other, { content: "Kafka consumer lag alerts page the on-call after ten minutes", project: "infra" }));
  // Not there until the server next searches: the catch-up happens on the search path.
  expect(server.index.size).toBe(1);
  let hits = await search(server, { query: "Kafka consumer lag alerts" });
  const hit = hits.results.find((r) => r.id === id);
  expect(hit?.matched_by).toContain("vector");
  expect(server.index.size).toBe(2);

  // Content edit elsewhere: the new vector is what the server finds.
  await updateMemory(other, { id, content: "Redis eviction storms follow a maxmemory policy change", project: "platform" });
  hits = await search(server, { query: "Redis eviction maxmemory policy", project: "platform" });
  expect(hits.results.find((r) => r.id === id)?.matched_by).toContain("vector");
  expect((await search(server, { query: "Redis eviction maxmemory policy", project: "infra" })).results.some((r) => r.id === id)).toBe(false);

  deleteMemory(other, id);
  hits = await search(server, { query: "Redis eviction maxmemory policy" });
  expect(hits.results.some((r) => r.id === id)).toBe(false);
  expect(server.index.size).toBe(1);
});

test("this connection's own writes are not replayed while no other connection writes", async () => {
  const [server, other] = pair();
  for (let i = 0; i < 5; i++) await ingestMemory(server, { content: `note number ${i} about the billing webhook retries` });
  await search(server, { query: "billing webhook" });
  const cursor = server.indexState.cursor;
  expect(cursor).toBeGreaterThanOrEqual(5);
  // The other connection sees the server's writes too (it is the same log).
  await search(other, { query: "billing webhook" });
  expect(other.index.size).toBe(5);
  expect(other.indexState.cursor).toBe(cursor);
});
