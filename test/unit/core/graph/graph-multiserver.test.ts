import { afterAll, beforeAll, expect, test } from "bun:test";
import { addLink, exportGraph, hubs, neighbors, path } from "../../../../src/core/graph";
import { ingestMemory } from "../../../../src/core/ingest";
import { onPostgres } from "../../../helpers/engine";
import { seedGraph } from "../../../helpers/graph-seed";
import { makeServices, type TestServices } from "../../../helpers/services";

// Two Services over one store, as two memsvc servers over one database (on
// PostgreSQL one schema with two pools; on SQLite one file): the graph is the
// database's, so a link written through one is walked through the other at once.
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

test("links written through one server are neighbours, hubs, paths and export edges on the other", async () => {
  const ids = await seedGraph(a, [{ key: "x" }, { key: "y" }, { key: "z" }], [["x", "y", "related", 0.9]]);
  expect((await neighbors(b, { id: ids.x })).neighbors.map((n) => n.id)).toEqual([ids.y]);
  expect((await path(b, { id: ids.x, target_id: ids.z })).found).toBe(false);
  await addLink(b, ids.y, ids.z, "caused_by", 0.7);
  expect(await path(a, { id: ids.x, target_id: ids.z })).toMatchObject({ found: true, hops: 2 });
  expect((await hubs(a, {})).hubs[0]).toMatchObject({ id: ids.y, connections: 2 });
  const [ga, gb] = await Promise.all([exportGraph(a, {}), exportGraph(b, {})]);
  expect(gb.edges.map((e) => `${e.source}>${e.target}`).sort()).toEqual([`${ids.x}>${ids.y}`, `${ids.y}>${ids.z}`].sort());
  expect(ga.meta).toMatchObject({ total_links: 2, edges: 2, total_memories: 3 });
});

// PostgreSQL only: SQLite's one writer makes the ingest wait for the whole delete, and in one
// process its synchronous wait would hold the event loop that is to end the delete.
test.skipIf(!onPostgres)("an ingest whose nearest neighbour another server is deleting waits for that delete, then links past it", async () => {
  const base = "The release script bumps the version in package.json before it tags the commit and pushes the tag";
  const near = await ingestMemory(a, { content: base, project: "rel" });
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let deleting!: () => void;
  const begun = new Promise<void>((r) => (deleting = r));
  // Server b deletes the neighbour in a transaction held open while server a ingests beside it.
  const del = b.storage.transaction(async (tx) => {
    await tx.memories.deleteMemories([near.id!]);
    deleting();
    await gate;
  });
  await begun;
  const ingest = ingestMemory(a, { content: `${base}, then the changelog is generated from the tag`, project: "rel" });
  await Bun.sleep(300);
  release();
  await del;
  const added = await ingest;
  expect((await neighbors(a, { id: added.id! })).neighbors.map((n) => n.id)).not.toContain(near.id);
  expect((await neighbors(b, { id: added.id! })).neighbors).toEqual([]);
});
