import { afterEach, describe, expect, test } from "bun:test";
import { graphQuery, hubs, neighbors, path } from "../../../../src/core/graph";
import { exportGraph } from "../../../../src/core/graph";
import { hubsText, neighborsText, pathText } from "../../../../src/core/graph";
import { addLink, linkToNearest } from "../../../../src/core/graph";
import { withStorage } from "../../../../src/core/storage";
import { deleteMemory, resolveMemory } from "../../../../src/core/memories";
import { GRAPH_PATH_MAX_HOPS } from "../../../../src/core/graph/tuning";
import { RECENT_LINK_LIST_FROM } from "../../../../src/store/sqlite/tuning";
import { AppError } from "../../../../src/errors";
import { dbRows } from "../../../helpers/engine";
import { seedGraph } from "../../../helpers/graph-seed";
import { makeServices, type TestServices } from "../../../helpers/services";

const NOW = Date.parse("2026-11-21T12:00:00Z");
let s: TestServices;
afterEach(async () => {
  await s?.close();
});

function fresh() {
  s = makeServices({ now: () => NOW });
  return s;
}

/** The error code a call throws (fails the test when it does not throw an AppError). */
async function codeOf(fn: () => unknown): Promise<{ code: string; message: string }> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof AppError) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error("expected an AppError");
}

/**
 *   a --related(0.9)--> b --caused_by(0.7)--> c      d <--supersedes(0.8)-- a
 *   a --fixes(0.5)--> b  (second relationship between the same pair)
 *   e, f: linked only to each other; g: no links at all
 */
async function small() {
  fresh();
  return seedGraph(
    s,
    [
      { key: "a", content: "Alpha: the staging database runs on port 5433", project: "infra", tags: ["postgres"] },
      { key: "b", content: "Beta: migrations must run before deploy", project: "infra", type: "decision" },
      { key: "c", content: "Gamma: deploy failed because of a lock", project: "web", tags: ["infra"], type: "experience" },
      { key: "d", content: "Delta: new port is 6543", project: "infra", type: "fact" },
      { key: "e", content: "Epsilon", project: "cooking" },
      { key: "f", content: "Zeta", project: "cooking" },
      { key: "g", content: "Eta alone", project: null },
    ],
    [
      ["a", "b", "related", 0.9],
      ["a", "b", "fixes", 0.5],
      ["b", "c", "caused_by", 0.7],
      ["a", "d", "supersedes", 0.8],
      ["e", "f", "related", 0.6],
    ],
  );
}

describe("neighbors", () => {
  test("lists linked memories in both directions, strongest link first, with every relationship", async () => {
    const ids = await small();
    const r = await neighbors(s, { id: ids.b });
    expect(r.memory.id).toBe(ids.b);
    expect(r.memory.content).toBe("Beta: migrations must run before deploy");
    expect(r.memory.domain).toBe("infra");
    expect(r.total).toBe(2);
    expect(r.neighbors.map((n) => n.id)).toEqual([ids.a, ids.c]);
    expect(r.neighbors[0].relationships).toEqual([
      { relationship: "related", direction: "in", weight: 0.9 },
      { relationship: "fixes", direction: "in", weight: 0.5 },
    ]);
    expect(r.neighbors[1].relationships).toEqual([{ relationship: "caused_by", direction: "out", weight: 0.7 }]);
    expect(r.neighbors[1].domain).toBe("web");
    expect(r.neighbors[1].preview).toBe("Gamma: deploy failed because of a lock");
  });

  test("relationship filter (normalised), limit, 8-char prefix; does not mark the memory used", async () => {
    const ids = await small();
    const r = await neighbors(s, { id: ids.a.slice(0, 8), relationship: "Supersedes", limit: "5" });
    expect(r.relationship).toBe("supersedes");
    expect(r.neighbors.map((n) => n.id)).toEqual([ids.d]);
    const limited = await neighbors(s, { id: ids.a, limit: 1 });
    expect(limited.total).toBe(2);
    expect(limited.count).toBe(1);
    expect(limited.neighbors[0].id).toBe(ids.b);
    expect((await resolveMemory(s, ids.a)).usedCount).toBe(0);
    expect((await neighbors(s, { id: ids.g })).neighbors).toEqual([]);
  });

  test("missing id, bad limit: 400; unknown id: 404", async () => {
    await small();
    expect((await codeOf(async () => await neighbors(s, { id: undefined }))).code).toBe("invalid");
    expect((await codeOf(async () => await neighbors(s, { id: "00000000-0000-4000-8000-000000000000" }))).code).toBe("not_found");
    const any = (await exportGraph(s, { limit: 1 })).nodes[0].id;
    for (const limit of ["abc", "0", "-3", "1.5"]) expect((await codeOf(async () => await neighbors(s, { id: any, limit }))).message).toContain("limit");
  });
});

describe("hubs", () => {
  test("most links first; memories without links are not hubs; domain filters on the primary domain", async () => {
    const ids = await small();
    const all = await hubs(s, {});
    // a: 3 links, b: 3 links, then c, d, e, f with 1; g has none.
    expect(
      all.hubs
        .slice(0, 2)
        .map((h) => h.id)
        .sort(),
    ).toEqual([ids.a, ids.b].sort());
    expect(all.hubs[0].connections).toBe(3);
    expect(all.hubs.map((h) => h.id)).not.toContain(ids.g);
    expect(all.count).toBe(6);
    // c carries the tag "infra" only as a secondary tag: not in the infra domain.
    const infra = await hubs(s, { domain: "INFRA", limit: 10 });
    expect(infra.domain).toBe("infra");
    expect(infra.hubs.map((h) => h.id).sort()).toEqual([ids.a, ids.b, ids.d].sort());
    expect((await hubs(s, { domain: "cooking" })).hubs.map((h) => h.id).sort()).toEqual([ids.e, ids.f].sort());
    expect((await hubs(s, { limit: 2 })).count).toBe(2);
    expect((await hubs(s, { domain: "nowhere" })).hubs).toEqual([]);
  });

  test("the order holds across RECENT_LINK_LIST_FROM (SQLite reads the most linked from a partial index, the rest by a scan)", async () => {
    fresh();
    const cut = RECENT_LINK_LIST_FROM;
    // Hubs with cut + 2, cut, cut - 1 and 1 links, two of them in domain "web"; leaves link to them.
    const hubsWanted: [string, number, string | null][] = [
      ["h1", cut + 2, "infra"],
      ["h2", cut, "web"],
      ["h3", cut - 1, "web"],
      ["h4", 1, "infra"],
      ["h5", 2, null],
    ];
    const memories: { key: string; content: string; project: string | null }[] = hubsWanted.map(([key, , project]) => ({
      key,
      content: `Hub ${key} for ${project}`,
      project,
    }));
    const links: [string, string, string, number][] = [];
    for (const [key, n] of hubsWanted) {
      for (let i = 0; i < n; i++) {
        memories.push({ key: `${key}-${i}`, content: `Leaf ${i} of ${key}`, project: "leaves" });
        links.push([`${key}-${i}`, key, "related", 0.5]);
      }
    }
    const ids = await seedGraph(s, memories, links);
    const order = (r: Awaited<ReturnType<typeof hubs>>) => r.hubs.map((h) => h.id);
    expect(order(await hubs(s, { limit: 3 }))).toEqual([ids.h1, ids.h2, ids.h3]);
    expect((await hubs(s, { limit: 3 })).hubs.map((h) => h.connections)).toEqual([cut + 2, cut, cut - 1]);
    expect(order(await hubs(s, { limit: 2 }))).toEqual([ids.h1, ids.h2]);
    expect(order(await hubs(s, { domain: "web", limit: 5 }))).toEqual([ids.h2, ids.h3]);
    expect(order(await hubs(s, { domain: "infra", limit: 5 }))).toEqual([ids.h1, ids.h4]);
    // Untagged memories are in "general": no primary-domain row to read them from.
    expect(order(await hubs(s, { domain: "general", limit: 5 }))).toEqual([ids.h5]);
    // Every hub, then the leaves (one link each), nothing twice.
    const all = order(await hubs(s, { limit: 100 }));
    expect(all.slice(0, 3)).toEqual([ids.h1, ids.h2, ids.h3]);
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBe(memories.length);
  });

  test("bad limit or domain: 400", async () => {
    await small();
    expect((await codeOf(async () => await hubs(s, { limit: "many" }))).code).toBe("invalid");
    expect((await codeOf(async () => await hubs(s, { domain: "---" }))).message).toContain("domain");
  });
});

describe("path", () => {
  test("shortest path over links in either direction", async () => {
    const ids = await small();
    const r = await path(s, { id: ids.d, target_id: ids.c });
    expect(r.found).toBe(true);
    expect(r.hops).toBe(3);
    expect(r.path.map((m) => m.id)).toEqual([ids.d, ids.a, ids.b, ids.c]);
    expect(r.links.map((l) => l.relationship)).toEqual(["supersedes", "related", "caused_by"]);
    expect(r.links[0]).toMatchObject({ from_id: ids.a, to_id: ids.d });
  });

  test("the same memory is a path of 0 links; disconnected memories give found:false with a message", async () => {
    const ids = await small();
    expect((await path(s, { id: ids.a, target_id: ids.a })).hops).toBe(0);
    const none = await path(s, { id: ids.a, target_id: ids.e });
    expect(none).toMatchObject({ found: false, hops: null, path: [], links: [] });
    expect(none.message).toContain("not connected");
  });

  test("gives up beyond the hop limit", async () => {
    fresh();
    const n = GRAPH_PATH_MAX_HOPS + 2;
    const chain = Array.from({ length: n }, (_, i) => ({ key: `m${i}` }));
    const ids = await seedGraph(
      s,
      chain,
      chain.slice(1).map((m, i) => [`m${i}`, m.key, "next", 1] as [string, string, string, number]),
    );
    expect((await path(s, { id: ids.m0, target_id: ids[`m${GRAPH_PATH_MAX_HOPS}`] })).hops).toBe(GRAPH_PATH_MAX_HOPS);
    const far = await path(s, { id: ids.m0, target_id: ids[`m${n - 1}`] });
    expect(far.found).toBe(false);
    expect(far.message).toContain(`within ${GRAPH_PATH_MAX_HOPS} links`);
  });

  test("missing target_id: 400; unknown: 404", async () => {
    const ids = await small();
    expect((await codeOf(async () => await path(s, { id: ids.a, target_id: undefined }))).message).toContain("target_id");
    expect((await codeOf(async () => await path(s, { id: ids.a, target_id: "ffffffff" }))).code).toBe("not_found");
  });
});

describe("export", () => {
  test("nodes ranked by effective strength with tags by weight and primary domain; domains and types counted", async () => {
    fresh();
    const ids = await seedGraph(s, [
      { key: "old", strength: 3, ageDays: 120, project: "infra", tags: ["postgres", "ops"] },
      { key: "new", strength: 1, ageDays: 0, project: "web" },
      { key: "mid", strength: 2, ageDays: 15, project: null, tags: ["cooking"] },
    ]);
    const g = await exportGraph(s, {});
    // 3 * (0.15 + 0.85/16) ≈ 0.61 < 1 < 2 * (0.15 + 0.85 * 0.707) ≈ 1.5
    expect(g.nodes.map((n) => n.id)).toEqual([ids.mid, ids.new, ids.old]);
    const old = g.nodes[2];
    expect(old.tags.map((t) => t.tag)).toEqual(["infra", "postgres", "ops"]);
    expect(old.domain).toBe("infra");
    expect(old.strength).toBe(3);
    expect(old.effective_strength).toBeCloseTo(0.609, 2);
    expect(g.nodes[0].domain).toBe("cooking");
    expect(g.domains.map((d) => [d.name, d.memories, d.nodes])).toEqual([
      ["cooking", 1, 1],
      ["infra", 1, 1],
      ["web", 1, 1],
    ]);
    expect(g.types.find((t) => t.name === "knowledge")).toEqual({ name: "knowledge", memories: 3, nodes: 3 });
    expect(g.types.map((t) => t.name).sort()).toEqual(["decisions", "experience", "knowledge", "learnings"]);
    expect(g.meta).toMatchObject({ total_memories: 3, matched: 3, nodes: 3, edges: 0, limit: 5000, truncated: false });
  });

  test("an edge only when both ends are nodes", async () => {
    const ids = await small();
    const g = await exportGraph(s, { domain: "infra" });
    expect(g.nodes.map((n) => n.id).sort()).toEqual([ids.a, ids.b, ids.d].sort());
    // b -> c is left out: c is not a node of this slice.
    expect(g.edges.map((e) => `${e.source}>${e.target}:${e.relationship}`).sort()).toEqual(
      [`${ids.a}>${ids.b}:related`, `${ids.a}>${ids.b}:fixes`, `${ids.a}>${ids.d}:supersedes`].sort(),
    );
    expect(g.meta.edges).toBe(3);
    expect(g.meta.total_links).toBe(5);
    // domains count the whole store (for the filter list) and this slice's nodes.
    expect(g.domains.map((d) => [d.name, d.memories, d.nodes])).toEqual([
      ["infra", 3, 3],
      ["cooking", 2, 0],
      ["general", 1, 0],
      ["web", 1, 0],
    ]);
    expect((await exportGraph(s, {})).edges.length).toBe(5);
  });

  test("small and large slices of a bigger store agree on edges and counts (probe by id vs. full scan)", async () => {
    fresh();
    const cooking = Array.from({ length: 17 }, (_, i) => ({ key: `k${i}`, project: "cooking" }));
    const ids = await seedGraph(
      s,
      [{ key: "a", project: "infra" }, { key: "b", project: "infra" }, { key: "c", project: "infra", tags: ["cooking"] }, ...cooking],
      [
        ["a", "b", "related", 0.9],
        ["b", "c", "related", 0.8],
        ["a", "k0", "related", 0.7],
        ["k0", "k1", "related", 0.6],
      ],
    );
    const pairs = (g: Awaited<ReturnType<typeof exportGraph>>) => g.edges.map((e) => `${e.source}>${e.target}`).sort();
    const small = await exportGraph(s, { domain: "infra" }); // 3 of 20 nodes
    expect(pairs(small)).toEqual([`${ids.a}>${ids.b}`, `${ids.b}>${ids.c}`].sort());
    expect(small.domains.map((d) => [d.name, d.memories, d.nodes])).toEqual([
      ["cooking", 17, 0],
      ["infra", 3, 3],
    ]);
    const large = await exportGraph(s, { domain: "cooking" }); // 17 of 20 nodes
    expect(pairs(large)).toEqual([`${ids.k0}>${ids.k1}`]);
    expect(large.domains.map((d) => [d.name, d.memories, d.nodes])).toEqual([
      ["cooking", 17, 17],
      ["infra", 3, 0],
    ]);
    expect((await exportGraph(s, { tag: "cooking" })).nodes.length).toBe(18);
    expect(small.nodes.find((n) => n.id === ids.c)!.tags.map((t) => t.tag)).toEqual(["infra", "cooking"]);
  });

  test("domain filters on the primary domain, tag on any tag at any weight, type accepts legacy names", async () => {
    const ids = await small();
    const idsOf = async (f: Parameters<typeof exportGraph>[1]) => (await exportGraph(s, f)).nodes.map((n) => n.id).sort();
    expect(await idsOf({ domain: "web" })).toEqual([ids.c]);
    expect(await idsOf({ tag: "infra" })).toEqual([ids.a, ids.b, ids.c, ids.d].sort());
    expect(await idsOf({ tag: "postgres" })).toEqual([ids.a]);
    expect(await idsOf({ domain: "general" })).toEqual([ids.g]);
    expect(await idsOf({ type: "fact" })).toEqual(await idsOf({ type: "knowledge" }));
    expect(await idsOf({ type: "decisions" })).toEqual([ids.b]);
    expect(await idsOf({ type: "decisions", domain: "web" })).toEqual([]);
    expect((await exportGraph(s, { type: "fact" })).meta.filters.type).toBe("knowledge");
  });

  test("minStrength applies to effective strength", async () => {
    fresh();
    const ids = await seedGraph(s, [
      { key: "fresh", strength: 1 },
      { key: "faded", strength: 1, ageDays: 90 },
    ]);
    expect((await exportGraph(s, { minStrength: "0.5" })).nodes.map((n) => n.id)).toEqual([ids.fresh]);
    expect((await exportGraph(s, { minStrength: 0 })).nodes.length).toBe(2);
    expect((await exportGraph(s, { minStrength: "5" })).nodes.length).toBe(0);
  });

  test("limit: default 5000, capped at 10000, truncated says so", async () => {
    fresh();
    const n = 10_005;
    // Rows alone (no vectors or tags: the export needs neither), in one statement both engines speak.
    await dbRows(
      s,
      `WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < ?)
       INSERT INTO memories(id, content, memory_type, created_at, updated_at, refreshed_at, strength)
       SELECT 'bulk-' || i, 'bulk ' || i, 'knowledge', ?, ?, ?, 1 + 1.0 * i / ? FROM k`,
      [n - 1, NOW, NOW, NOW, n],
    );
    const def = await exportGraph(s, {});
    expect(def.nodes.length).toBe(5000);
    expect(def.meta).toMatchObject({ matched: n, nodes: 5000, limit: 5000, truncated: true });
    // The strongest come first.
    expect(def.nodes[0].preview).toBe(`bulk ${n - 1}`);
    const capped = await exportGraph(s, { limit: "20000" });
    expect(capped.nodes.length).toBe(10_000);
    expect(capped.meta.limit).toBe(10_000);
    expect((await exportGraph(s, { limit: 7 })).nodes.length).toBe(7);
  });

  test("bad filters: 400 naming the parameter", async () => {
    await small();
    const bad: [Record<string, unknown>, string][] = [
      [{ limit: "abc" }, "limit"],
      [{ limit: "0" }, "limit"],
      [{ minStrength: "-1" }, "minStrength"],
      [{ minStrength: "NaN" }, "minStrength"],
      [{ minStrength: "Infinity" }, "minStrength"],
      [{ minStrength: "0.5x" }, "minStrength"],
      [{ type: "opinion" }, "type"],
      [{ domain: "!!!" }, "domain"],
      [{ tag: "x".repeat(101) }, "tag"],
    ];
    for (const [input, field] of bad) {
      const e = await codeOf(async () => await exportGraph(s, input));
      expect(e.code).toBe("invalid");
      expect(e.message).toContain(field);
    }
  });
});

describe("deleting a memory", () => {
  test("removes its links everywhere: neighbours, hubs, paths, export edges", async () => {
    const ids = await small();
    expect((await resolveMemory(s, ids.b)).linkCount).toBe(3);
    const r = await deleteMemory(s, ids.a);
    expect(r.links_removed).toBe(3);
    expect((await resolveMemory(s, ids.b)).linkCount).toBe(1);
    expect((await neighbors(s, { id: ids.b })).neighbors.map((n) => n.id)).toEqual([ids.c]);
    expect((await neighbors(s, { id: ids.d })).total).toBe(0);
    expect((await path(s, { id: ids.d, target_id: ids.c })).found).toBe(false);
    const g = await exportGraph(s, {});
    expect(g.nodes.map((n) => n.id)).not.toContain(ids.a);
    expect(g.edges.length).toBe(2);
    // No link of a's is left anywhere: 5 - 3.
    expect(g.meta.total_links).toBe(2);
  });
});

describe("graphQuery (GET /graph)", () => {
  test("dispatches each op; unknown op, missing op and unknown parameters are 400", async () => {
    const ids = await small();
    expect(await graphQuery(s, { op: "neighbors", id: ids.a })).toHaveProperty("neighbors");
    expect(await graphQuery(s, { op: "hubs" })).toHaveProperty("hubs");
    expect(await graphQuery(s, { op: "path", id: ids.a, target_id: ids.c })).toMatchObject({ found: true, hops: 2 });
    expect(await graphQuery(s, { op: "export", type: "decision" })).toHaveProperty("meta");
    expect((await codeOf(async () => await graphQuery(s, {} as never))).message).toContain("op is required");
    expect((await codeOf(async () => await graphQuery(s, { op: "shortest" } as never))).message).toContain("unknown op");
    expect((await codeOf(async () => await graphQuery(s, { op: "export", min_strength: "1" } as never))).message).toContain("min_strength");
    expect((await codeOf(async () => await graphQuery(s, { op: "hubs", id: ids.a }))).message).toContain('"id"');
  });
});

describe("text renderings for memsvc_graph", () => {
  test("neighbours with relationships, hubs with link counts, the path step by step", async () => {
    const ids = await small();
    const n = neighborsText(await neighbors(s, { id: ids.b }));
    expect(n).toContain(`Memory ${ids.b.slice(0, 8)}`);
    expect(n).toContain(`- ${ids.a.slice(0, 8)} [← related 0.9; ← fixes 0.5]`);
    expect(n).toContain(`- ${ids.c.slice(0, 8)} [caused_by → 0.7]`);
    expect(hubsText(await hubs(s, { domain: "cooking" }))).toMatch(/\b1 link\b(?!s)/);
    expect(hubsText(await hubs(s, { domain: "nowhere" }))).toBe('No linked memories in domain "nowhere" yet.');
    const p = pathText(await path(s, { id: ids.c, target_id: ids.a }));
    expect(p).toContain("(2 links)");
    expect(p).toContain("<-- caused_by (0.7) --");
    expect(pathText(await path(s, { id: ids.a, target_id: ids.f }))).toContain("no link path");
  });
});

test("addLink between memories feeds the graph at once", async () => {
  const ids = await small();
  await addLink(s, ids.g, ids.e, "Depends On", 0.4);
  expect((await neighbors(s, { id: ids.g })).neighbors[0]).toMatchObject({
    id: ids.e,
    relationships: [{ relationship: "depends_on", direction: "out", weight: 0.4 }],
  });
  expect((await path(s, { id: ids.g, target_id: ids.f })).hops).toBe(2);
});

test("linkToNearest links a memory to its nearest others in its project above the floor, never to itself", async () => {
  fresh();
  const unit = (pairs: [number, number][]) => {
    const v = new Float32Array(384);
    for (const [i, x] of pairs) v[i] = x;
    return v;
  };
  const between = unit([
    [0, 0.8],
    [1, 0.6],
  ]);
  const ids = await seedGraph(s, [
    { key: "x", project: "p", vector: unit([[0, 1]]) },
    { key: "y", project: "p", vector: unit([[1, 1]]) },
    { key: "other", project: "q", vector: unit([[0, 1]]) },
    { key: "new", project: "p", vector: between },
  ]);
  const link = (minSimilarity: number, batch: string[] = []) =>
    s.storage.transaction((tx) => linkToNearest(withStorage(s, tx), ids.new, between, "p", { minSimilarity, batch }));
  // y (0.6) is below the floor; "other" is in another project; "new" itself is nearest of all.
  expect(await link(0.7)).toBe(1);
  const r = await neighbors(s, { id: ids.new });
  expect(r.neighbors.map((n) => n.id)).toEqual([ids.x]);
  expect(r.neighbors[0].relationships).toEqual([{ relationship: "related", direction: "out", weight: expect.closeTo(0.8, 1) as unknown as number }]);
  // The memories written in the same batch are never linked by similarity.
  expect(await link(0.5, [ids.x])).toBe(1);
  expect((await neighbors(s, { id: ids.new })).neighbors.map((n) => n.id)).toEqual([ids.x, ids.y]);
  // Linking again re-weights (the stronger weight wins), it does not duplicate.
  expect(await link(0.5)).toBe(2);
  expect((await exportGraph(s, {})).meta.total_links).toBe(2);
  expect((await resolveMemory(s, ids.x)).linkCount).toBe(1);
});
