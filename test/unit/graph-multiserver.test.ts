import { afterAll, beforeAll, expect, test } from "bun:test";
import { addLink, exportGraph, hubs, neighbors, path } from "../../src/core/graph";
import { seedGraph } from "../helpers/graph-seed";
import { makeServices, type TestServices } from "../helpers/services";

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
