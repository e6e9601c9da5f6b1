import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dbRows } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

// The store methods a project-scoped caller reads through (issue 36), on
// whichever engine the run uses (MEMSVC_TEST_ENGINE): with a scope, every
// row, link and count is the scope's alone; without one, the whole store.
// Rows are written with plain SQL both engines speak; counts are by hand.
//
//   a1 - a2 (alpha), a1 - b1, b1 - b2, b2 - a3 (through beta), a2 - n (no project), a1 - a1 (itself)
const AT = { now: 1_000_000, previewChars: 40 };
const ALPHA = ["alpha"] as const;
let s: TestServices;

beforeAll(async () => {
  s = makeServices();
  const memory = (id: string, project: string | null, type = "knowledge") =>
    dbRows(
      s,
      "INSERT INTO memories(id, content, memory_type, project, source_agent, created_at, updated_at, refreshed_at, strength) VALUES (?, ?, ?, ?, 'test', 1, 1, 1, 1)",
      [id, `content of ${id}`, type, project],
    );
  await memory("a1", "alpha");
  await memory("a2", "alpha", "learnings");
  await memory("a3", "alpha");
  await memory("b1", "beta");
  await memory("b2", "beta", "decisions");
  await memory("n", null);
  const link = (from: string, to: string, w = 0.5) =>
    dbRows(s, "INSERT INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, 'related', ?, 1)", [from, to, w]);
  await link("a1", "a2", 0.9);
  await link("a1", "b1", 0.8);
  await link("b1", "b2");
  await link("b2", "a3");
  await link("a2", "n");
  await link("a1", "a1", 0.1);
  const tag = (id: string, t: string) => dbRows(s, "INSERT INTO memory_tags(memory_id, tag, weight) VALUES (?, ?, 1)", [id, t]);
  await tag("a1", "deploy");
  await tag("b1", "billing");
  await tag("b2", "billing");
  const anchor = (id: string) =>
    dbRows(s, "INSERT INTO memory_anchors(memory_id, repo, branch, commit_id, paths, anchored_at) VALUES (?, 'r', 'main', 'abcdef1', '[\"a.ts\"]', 1)", [id]);
  await anchor("a1");
  await anchor("b1");
});
afterAll(async () => {
  await s.close();
});

describe("GraphStore within a scope", () => {
  test("linksOf and linksAround follow links to the scope's memories only", async () => {
    const g = s.storage.graph;
    // Distinct ends: the engines list a link to itself once (PostgreSQL) or from both ends (SQLite).
    const others = async (scope?: readonly string[]) => [...new Set((await g.linksOf("a1", null, scope)).map((l) => l.other))].sort();
    expect(await others()).toEqual(["a1", "a2", "b1"]);
    expect(await others(ALPHA)).toEqual(["a1", "a2"]);
    expect(await g.linksOf("a2", null, ALPHA)).toEqual([{ other: "a1", relationship: "related", weight: 0.9, direction: "in" }]);
    expect((await g.linksAround(["a1"])).map((l) => l.other).sort()).toEqual(["a1", "a1", "a2", "b1"]);
    expect((await g.linksAround(["a1", "a3"], ALPHA)).map((l) => `${l.node}>${l.other}`).sort()).toEqual(["a1>a1", "a1>a1", "a1>a2"]);
  });

  test("memories: only the scope's, link counts within it (a link to itself once)", async () => {
    const g = s.storage.graph;
    const count = (rows: { id: string; linkCount: number }[]) => Object.fromEntries(rows.map((r) => [r.id, r.linkCount]));
    expect(count(await g.memories(["a1", "a2", "b1", "n"], AT))).toEqual({ a1: 3, a2: 2, b1: 2, n: 1 });
    expect(count(await g.memories(["a1", "a2", "b1", "n"], { ...AT, scope: ALPHA }))).toEqual({ a1: 2, a2: 1 });
  });

  test("hubs: the scope's memories ranked by links within it", async () => {
    const g = s.storage.graph;
    const hubs = await g.hubs({ ...AT, scope: ALPHA, domain: null, limit: 10 });
    expect(hubs.map((h) => [h.id, h.linkCount])).toEqual([
      ["a1", 2],
      ["a2", 1],
    ]);
    expect((await g.hubs({ ...AT, scope: ALPHA, domain: "deploy", limit: 10 })).map((h) => h.id)).toEqual(["a1"]);
    expect((await g.hubs({ ...AT, scope: ["gamma"], domain: null, limit: 10 })).length).toBe(0);
    expect((await g.hubs({ ...AT, domain: null, limit: 10 }))[0]).toMatchObject({ id: "a1", linkCount: 3 });
  });

  test("exportSlice: nodes, edges, totals, domain and type counts of the scope", async () => {
    const q = { ...AT, type: null, tag: null, domain: null, minStrength: null, limit: 100 };
    const all = await s.storage.graph.exportSlice(q);
    expect([all.totalMemories, all.totalLinks, all.rows.length]).toEqual([6, 6, 6]);
    const x = await s.storage.graph.exportSlice({ ...q, scope: ALPHA });
    expect(x.rows.map((r) => r.id).sort()).toEqual(["a1", "a2", "a3"]);
    expect(Object.fromEntries(x.rows.map((r) => [r.id, r.linkCount]))).toEqual({ a1: 2, a2: 1, a3: 0 });
    expect([x.matched, x.totalMemories, x.totalLinks]).toEqual([3, 3, 2]);
    expect(x.edges.map((e) => `${e.source}>${e.target}`).sort()).toEqual(["a1>a1", "a1>a2"]);
    expect(x.tags).toEqual([{ memoryId: "a1", tag: "deploy", weight: 1 }]);
    const byName = (c: { name: string; n: number }[]) => Object.fromEntries(c.map((r) => [r.name, r.n]));
    expect(byName(x.storeDomains)).toEqual({ deploy: 1, general: 2 });
    expect(byName(x.storeTypes)).toEqual({ knowledge: 2, learnings: 1 });
    const none = await s.storage.graph.exportSlice({ ...q, scope: ["gamma"] });
    expect([none.rows.length, none.totalMemories, none.totalLinks, none.storeDomains.length, none.storeTypes.length]).toEqual([0, 0, 0, 0, 0]);
  });
});

describe("other cross-project reads within a scope", () => {
  test("facets: the scope's projects and its memories' primary domains", async () => {
    expect((await s.storage.memories.facets()).projects.map((p) => p.name).sort()).toEqual(["alpha", "beta"]);
    expect(await s.storage.memories.facets(ALPHA)).toEqual({ projects: [{ name: "alpha", count: 3 }], domains: [{ name: "deploy", count: 1 }] });
  });

  test("repoAnchors and a memory's links (memory browser detail)", async () => {
    expect((await s.storage.memories.repoAnchors("r")).map((a) => a.memoryId).sort()).toEqual(["a1", "b1"]);
    expect((await s.storage.memories.repoAnchors("r", ALPHA)).map((a) => a.memoryId)).toEqual(["a1"]);
    expect((await s.storage.memories.linksOf("a1", 10, 10)).map((l) => l.id).sort()).toEqual(["a1", "a1", "a2", "b1"]);
    expect((await s.storage.memories.linksOf("a1", 10, 10, ALPHA)).map((l) => l.id).sort()).toEqual(["a1", "a1", "a2"]);
  });

  test("domainRows: the domain index's rows of the scope", async () => {
    const r = await s.storage.analytics.domainRows(ALPHA);
    expect(r.totals).toEqual({ memories: 3, learnings: 1, projects: 1 });
    expect(r.memories.map((m) => m.id).sort()).toEqual(["a1", "a2", "a3"]);
    expect(r.tags).toEqual([{ memoryId: "a1", tag: "deploy", weight: 1 }]);
    expect(r.projects).toEqual([{ project: "alpha", memories: 3, learnings: 1 }]);
    expect((await s.storage.analytics.domainRows()).totals).toEqual({ memories: 6, learnings: 1, projects: 2 });
  });
});
