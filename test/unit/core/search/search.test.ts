import { afterEach, describe, expect, test } from "bun:test";
import { ingestMemory } from "../../../../src/core/ingest";
import { addLink } from "../../../../src/core/graph";
import { withStorage } from "../../../../src/core/storage";
import { recent } from "../../../../src/core/search";
import { queryKeywords, search } from "../../../../src/core/search";
import { ftsExpression } from "../../../../src/store/sqlite/search-fts";
import { makeServices, type TestServices } from "../../../helpers/services";
import { dbRows, onPostgres } from "../../../helpers/engine";

let s: TestServices;
afterEach(async () => {
  await s?.close();
});

async function seed(items: [string, string | null][]) {
  const ids: string[] = [];
  for (const [content, project] of items) {
    const r = await ingestMemory(s, { content, project });
    ids.push(r.id!);
  }
  return ids;
}

const CORPUS: [string, string | null][] = [
  ["The billing service deploys with blue-green releases every Friday", "billing"],
  ["Postgres connection pool exhausted under load; raised max connections to 50", "billing"],
  ["Frontend uses Vite and React; run pnpm dev on port 5173", "web"],
  ["Never force-push to main; CI protects the branch", "web"],
  ["Kubernetes ingress timeouts fixed by raising proxy-read-timeout to 120s", "infra"],
  ["Team lunch is on Thursdays at noon", null],
];

describe("search", () => {
  test("finds the right memory first and carries every result field", async () => {
    s = makeServices();
    await seed(CORPUS);
    const r = await search(s, { query: "how does billing deploy releases?" });
    expect(r.results[0].content).toContain("blue-green");
    for (const hit of r.results) {
      expect(hit.score).toBeGreaterThan(0);
      expect(hit.score).toBeLessThanOrEqual(1);
      expect(typeof hit.effective_strength).toBe("number");
      expect(typeof hit.connections).toBe("number");
      expect(typeof hit.memory_type).toBe("string");
      expect(typeof hit.created_at).toBe("string");
      expect("project" in hit).toBe(true);
    }
    const scores = r.results.map((h) => h.score);
    expect(r.results.some((h) => h.content.includes("lunch"))).toBe(false);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  test("default limit 8, limit honoured, project filters", async () => {
    s = makeServices();
    await seed(Array.from({ length: 20 }, (_, i) => [`deploy note number ${i} about the deploy pipeline`, i % 2 ? "a" : "b"] as [string, string]));
    expect((await search(s, { query: "deploy pipeline" })).results).toHaveLength(8);
    expect((await search(s, { query: "deploy pipeline", limit: "3" } as never)).results).toHaveLength(3);
    const onlyA = await search(s, { query: "deploy pipeline", project: "a", limit: 50 });
    expect(onlyA.results).toHaveLength(10);
    expect(onlyA.results.every((h) => h.project === "a")).toBe(true);
    expect((await search(s, { query: "deploy pipeline", project: "nope" })).results).toHaveLength(0);
  });

  test("any user text is safe: FTS operators, quotes, unicode, 10 KB", async () => {
    s = makeServices();
    await seed(CORPUS);
    const nasty = [
      `don't "unbalanced`,
      "AND OR NOT",
      "*",
      "-billing",
      "NEAR(a b)",
      "content:billing",
      "billing^2 {x} [y] (z)",
      "日本語のテキスト 🚀 émigré",
      "'; DROP TABLE memories; --",
      "\u0000\u0001\u001f",
      "x".repeat(10_240),
      "deploy ".repeat(2000),
    ];
    for (const q of nasty) {
      const r = await search(s, { query: q });
      expect(Array.isArray(r.results)).toBe(true);
    }
    expect(await dbRows(s, "SELECT count(*) AS n FROM memories")).toEqual([{ n: CORPUS.length }]);
  });

  test("full text gets words only: no query syntax reaches the engine", () => {
    expect(queryKeywords(`deploy" AND * -prod NEAR(x)`)).toEqual(["deploy", "prod", "near"]);
    expect(queryKeywords("the and of")).toEqual([]);
    expect(ftsExpression(`deploy" AND * -prod NEAR(x)`)).toBe(`"deploy" OR "prod" OR "near"`);
    expect(ftsExpression("the and of")).toBeNull();
  });

  test("bad parameters are rejected with the field named", async () => {
    s = makeServices();
    for (const [input, field] of [
      [{}, /query/],
      [{ query: "  " }, /query/],
      [{ query: 5 }, /query/],
      [{ query: "x", limit: "abc" }, /limit/],
      [{ query: "x", limit: 0 }, /limit/],
      [{ query: "x", limit: "2.5" }, /limit/],
      [{ query: "x", project: {} }, /project/],
    ] as [Record<string, unknown>, RegExp][]) {
      await expect(search(s, input as never)).rejects.toThrow(field);
    }
  });

  test("one hop of the graph brings in a linked memory the query does not match", async () => {
    s = makeServices();
    const [a, , , , , lunch] = await seed(CORPUS);
    const before = await search(s, { query: "blue-green releases Friday", limit: 20 });
    expect(before.results.some((h) => h.id === lunch)).toBe(false);
    await s.storage.transaction(async (tx) => {
      await addLink(withStorage(s, tx), a, lunch, "scheduled_with", 1);
    });
    const after = await search(s, { query: "blue-green releases Friday", limit: 20 });
    const hit = after.results.find((h) => h.id === lunch);
    expect(hit?.matched_by).toEqual(["graph"]);
    expect(hit!.connections).toBe(1);
  });

  test("the graph hop reaches links in both directions, and with a project only the project's own neighbours", async () => {
    s = makeServices();
    const [a, , vite, , , lunch] = await seed(CORPUS);
    await s.storage.transaction(async (tx) => {
      // a -> lunch (no project) and vite (web) -> a: one link each way from the seed.
      await addLink(withStorage(s, tx), a, lunch, "scheduled_with", 1);
      await addLink(withStorage(s, tx), vite, a, "mentions", 1);
    });
    const all = await search(s, { query: "blue-green releases Friday", limit: 20 });
    expect(all.results.find((h) => h.id === lunch)?.matched_by).toEqual(["graph"]);
    expect(all.results.find((h) => h.id === vite)?.matched_by).toEqual(["graph"]);
    const billing = await search(s, { query: "blue-green releases Friday", project: "billing", limit: 20 });
    expect(billing.results[0].id).toBe(a);
    expect(billing.results.map((h) => h.id)).not.toContain(lunch);
    expect(billing.results.map((h) => h.id)).not.toContain(vite);
    expect(billing.results.every((h) => h.project === "billing")).toBe(true);
  });

  test("effective strength moves ranking between equally relevant memories", async () => {
    s = makeServices();
    const [weak, strong] = await seed([
      ["cache invalidation rule for the api gateway", "x"],
      ["cache invalidation rule for the api gateway", "x"],
    ]);
    await dbRows(s, "UPDATE memories SET strength = 3 WHERE id = ?", [strong]);
    await dbRows(s, "UPDATE memories SET strength = 0.3, refreshed_at = 0 WHERE id = ?", [weak]);
    const r = await search(s, { query: "cache invalidation gateway" });
    expect(r.results[0].id).toBe(strong);
    expect(r.results[1].score).toBeLessThan(r.results[0].score);
  });
});

describe("recent", () => {
  test("ranks by importance: strength, connections and recency; project filter; default 12", async () => {
    const now = Date.UTC(2026, 5, 1);
    let clock = now - 100 * 86_400_000;
    s = makeServices({ now: () => clock });
    const ids = await seed(Array.from({ length: 15 }, (_, i) => [`old note ${i}`, i < 5 ? "p" : "q"] as [string, string]));
    clock = now;
    const [fresh] = await seed([["fresh note from today", "p"]]);
    const r1 = await recent(s, {});
    expect(r1.results).toHaveLength(12);
    expect(r1.results[0].id).toBe(fresh);
    expect(r1.results[0].score).toBeGreaterThan(r1.results[1].score);
    // A strong, well-connected old memory climbs above plain old ones.
    await dbRows(s, "UPDATE memories SET strength = 4, refreshed_at = ? WHERE id = ?", [now, ids[7]]);
    await s.storage.transaction(async (tx) => {
      for (const other of ids.slice(0, 4)) await addLink(withStorage(s, tx), ids[7], other, "related", 1);
    });
    const r2 = await recent(s, { limit: 3 });
    expect(r2.results.map((h) => h.id)).toContain(ids[7]);
    const [{ n: links }] = await dbRows<{ n: number }>(s, "SELECT count(*) AS n FROM links WHERE from_id = ? OR to_id = ?", [ids[7], ids[7]]);
    expect(links).toBeGreaterThanOrEqual(4);
    expect(r2.results.find((h) => h.id === ids[7])!.connections).toBe(links);
    const onlyP = await recent(s, { project: "p", limit: 100 });
    expect(onlyP.results).toHaveLength(6);
    expect(onlyP.results.every((h) => h.project === "p")).toBe(true);
    await expect(recent(s, { limit: "-1" } as never)).rejects.toThrow(/limit/);
  });
});

describe("recent at scale", () => {
  // test/unit/store/search-store.test.ts holds the PostgreSQL engine's version.
  test.skipIf(onPostgres)("the walk down `touched` returns exactly what scoring every row returns [SQLite engine's statements]", async () => {
    const { walkTouched: walk_, scoreAll: all_ } = await import("../../../../src/store/sqlite/search-recent");
    const walk = (x: TestServices, p: { now: number; project: string | null; limit: number }) => walk_(x.store.sqlite, p);
    const scoreAll = (x: TestServices, p: { now: number; project: string | null; limit: number }) => all_(x.store.sqlite, p);
    const now = Date.UTC(2026, 5, 1);
    s = makeServices({ now: () => now });
    const day = 86_400_000;
    let x = 12345;
    const rnd = () => (x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const ins = s.store.sqlite.prepare(
      "INSERT INTO memories(id, content, memory_type, project, created_at, updated_at, refreshed_at, strength, link_count) VALUES (?, ?, 'knowledge', ?, ?, ?, ?, ?, ?)",
    );
    const check = async (label: string) => {
      for (const project of [null, "a", "b", "c", "none"]) {
        for (const limit of [1, 12, 100]) {
          const p = { now, project, limit };
          const expected = scoreAll(s, p).map((r) => r.id);
          expect({ label, p, ids: walk(s, p).map((r) => r.id) }).toEqual({ label, p, ids: expected });
          expect((await recent(s, { project: project ?? undefined, limit })).results.map((r) => r.id)).toEqual(expected);
        }
      }
    };
    // 4,000 memories over a year, newer ones more frequent, with varied strength, refreshes and links.
    s.store.sqlite.transaction(() => {
      for (let i = 0; i < 4000; i++) {
        const created = now - Math.floor(rnd() ** 2 * 365 * day);
        const refreshed = rnd() < 0.2 ? created + Math.floor(rnd() * (now - created)) : created;
        ins.run(
          crypto.randomUUID(),
          `note ${i}`,
          i % 8 === 0 ? "c" : i % 3 ? "a" : "b",
          created,
          created,
          refreshed,
          rnd() < 0.05 ? 1 + rnd() * 4 : 1,
          Math.floor(rnd() ** 3 * 20),
        );
      }
    })();
    await check("recent-heavy year");
    // Nothing new for months: the floor is low and the walk must reach far back.
    s.store.sqlite.run("UPDATE memories SET created_at = created_at - 200 * ?1, refreshed_at = refreshed_at - 200 * ?1", [day]);
    await check("stale store");
    // One very strong, very linked old memory: the bound stays high for every age.
    s.store.sqlite.run("UPDATE memories SET strength = 5, link_count = 400 WHERE seq = (SELECT min(seq) FROM memories)");
    await check("one strong old memory");
    // Rows the bound must still cover: refreshed before created (imports), created in the future, zero and negative strength, exact ties.
    s.store.sqlite.transaction(() => {
      for (let i = 0; i < 300; i++) {
        const created = now - Math.floor(rnd() * 30 * day);
        const kind = i % 4;
        ins.run(
          crypto.randomUUID(),
          `odd ${i}`,
          i % 2 ? "a" : null,
          kind === 1 ? now + Math.floor(rnd() * day) : created,
          created,
          kind === 0 ? created - Math.floor(rnd() * 60 * day) : created,
          kind === 2 ? (i % 3) - 1 : 1.5,
          kind === 3 ? 3 : 0,
        );
      }
      // Identical rows: only the seq tie-break orders them.
      for (let i = 0; i < 30; i++) ins.run(crypto.randomUUID(), `tie ${i}`, "b", now - day, now - day, now - day, 2, 4);
    })();
    await check("odd rows and ties");
  });
});

describe("project-filtered full text", () => {
  test.skipIf(onPostgres)("filtering through the project index returns exactly what joining the memory rows returns [SQLite engine's statements]", async () => {
    s = makeServices();
    const words = ["webhook", "retry", "cache", "eviction", "deploy", "schema", "billing", "timeout", "queue", "lock"];
    let x = 777;
    const rnd = () => (x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32;
    s.store.sqlite.transaction(() => {
      const ins = s.store.sqlite.prepare(
        "INSERT INTO memories(id, content, memory_type, project, created_at, updated_at, refreshed_at) VALUES (?, ?, 'knowledge', ?, 1, 1, 1)",
      );
      for (let i = 0; i < 3000; i++) {
        const text = Array.from({ length: 3 + Math.floor(rnd() * 30) }, () => words[Math.floor(rnd() ** 2 * words.length)]).join(" ");
        ins.run(crypto.randomUUID(), text, [null, "a", "b", "c", "d"][Math.floor(rnd() * 5)]);
      }
    })();
    const reference = s.store.sqlite.query<{ seq: number }, [string, string, number]>(
      "SELECT f.rowid AS seq FROM memories_fts f JOIN memories m ON m.seq = f.rowid WHERE memories_fts MATCH ? AND m.project = ? ORDER BY bm25(memories_fts) LIMIT ?",
    );
    let compared = 0;
    for (const terms of [["webhook"], ["lock", "queue"], ["cache", "timeout", "schema"], words]) {
      for (const project of ["a", "b", "d", "missing"]) {
        for (const k of [1, 10, 60, 5000]) {
          const got = await s.storage.search.fullText(terms, project, k, { every: true });
          const expr = terms.map((t) => `"${t}"`).join(" OR ");
          expect(got).toEqual(reference.all(expr, project, k).map((r) => r.seq));
          compared += got.length;
        }
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });
});
