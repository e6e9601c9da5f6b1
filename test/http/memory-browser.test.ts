import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { dbRow, dbRows, onSqlite } from "../helpers/engine";
import { seedGraph, type SeedMemory } from "../helpers/graph-seed";
import { requestFrom, startServer, type TestServer } from "../helpers/server";

let srv: TestServer;
let ids: Record<string, string>;

const SEED: SeedMemory[] = [
  { key: "a", content: "Alpha: the staging database listens on port 5433", project: "infra", tags: ["databases"], ageDays: 1, strength: 1.5 },
  { key: "b", content: "Beta: run migrations before every deploy", project: "infra", type: "decisions", ageDays: 2, strength: 0.4 },
  { key: "c", content: "Gamma: braise onions slowly", project: "cooking", type: "experience", ageDays: 3, strength: 1 },
  { key: "d", content: "Delta: the deploy script needs bash 5", project: "infra", type: "learnings", ageDays: 40, strength: 2 },
  { key: "e", content: "Epsilon: no project here", project: null, ageDays: 5, strength: 0.9 },
];

beforeEach(async () => {
  srv = await startServer();
  ids = await seedGraph(srv.services, SEED, [
    ["a", "b", "related", 0.8],
    ["d", "a", "supports", 0.5],
  ]);
  await dbRows(srv.services, "UPDATE memories SET shown_count = 3 WHERE id = ?", [ids.a]);
  await dbRows(srv.services, "UPDATE memories SET shown_count = 2, used_count = 1 WHERE id = ?", [ids.b]);
});
afterEach(async () => {
  await srv.stop();
});

const get = (path: string) => fetch(`${srv.url}${path}`);
const list = async (qs: string) => {
  const res = await get(`/memories/list?${qs}`);
  expect(res.status).toBe(200);
  return res.json();
};
const keys = (items: { id: string }[]) => items.map((i) => Object.entries(ids).find(([, id]) => id === i.id)![0]);

describe("GET /memories/list", () => {
  test("newest first by default, with the total and list fields", async () => {
    const r = await list("");
    expect(r.sort).toBe("newest");
    expect(r.total).toBe(5);
    expect(keys(r.items)).toEqual(["a", "b", "c", "e", "d"]);
    expect(r.items[0]).toMatchObject({
      id: ids.a,
      short_id: ids.a.slice(0, 8),
      memory_type: "knowledge",
      project: "infra",
      domain: "infra",
      shown_count: 3,
      used_count: 0,
      connections: 2,
    });
    expect(r.items[0].preview).toContain("staging database");
    expect(r.next_cursor).toBeNull();
  });

  test("keyset pages cover every memory once, in order, with no total after the first", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: any = await list(`limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      if (pages === 0) expect(r.total).toBe(5);
      else expect(r.total).toBeUndefined();
      seen.push(...keys(r.items));
      cursor = r.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(["a", "b", "c", "e", "d"]);
  });

  test("importance sorts by stored strength, and pages by it", async () => {
    const first = await list("sort=importance&limit=3");
    expect(keys(first.items)).toEqual(["d", "a", "c"]);
    const second = await list(`sort=importance&limit=3&cursor=${first.next_cursor}`);
    expect(keys(second.items)).toEqual(["e", "b"]);
  });

  test("each filter narrows the list", async () => {
    expect(keys((await list("project=infra")).items)).toEqual(["a", "b", "d"]);
    expect(keys((await list("type=decisions")).items)).toEqual(["b"]);
    expect(keys((await list("domain=databases")).items)).toEqual([]);
    expect(keys((await list("domain=infra")).items)).toEqual(["a", "b", "d"]);
    expect(keys((await list("domain=general")).items)).toEqual(["e"]);
    expect(keys((await list("usage=never")).items)).toEqual(["c", "e", "d"]);
    expect(keys((await list("usage=shown")).items)).toEqual(["a", "b"]);
    expect(keys((await list("usage=used")).items)).toEqual(["b"]);
    // d is strong (2) but 40 days old: its effective strength has decayed below a's.
    const strong = await list("min_strength=1.2");
    expect(keys(strong.items)).toContain("a");
    expect(strong.items.every((i: any) => i.effective_strength >= 1.2)).toBe(true);
    const day = (d: number) => new Date(srv.services.now() - d * 86_400_000).toISOString().slice(0, 10);
    expect(keys((await list(`from=${day(2)}&to=${day(1)}`)).items)).toEqual(["a", "b"]);
    expect((await list("project=infra&type=learnings")).total).toBe(1);
  });

  test("a query runs the hybrid search and filters its hits", async () => {
    const r = await list("query=deploy");
    expect(r.sort).toBe("relevance");
    expect(keys(r.items).sort()).toEqual(expect.arrayContaining(["b", "d"]));
    expect(r.items.every((i: any) => typeof i.score === "number")).toBe(true);
    const filtered = await list("query=deploy&type=learnings");
    expect(keys(filtered.items)).toEqual(["d"]);
    const newest = await list("query=deploy&sort=newest&project=infra");
    const order = keys(newest.items).filter((k) => k === "b" || k === "d");
    expect(order).toEqual(["b", "d"]);
  });

  test("with a query and no other filter, the list is /search's ranking, paged", async () => {
    const search = await (await get("/search?query=deploy%20database&limit=100")).json();
    const first = await list("query=deploy%20database&limit=2");
    const rest = await list(`query=deploy%20database&limit=100&cursor=${first.next_cursor}`);
    expect([...first.items, ...rest.items].map((i: any) => i.id)).toEqual(search.results.map((r: any) => r.id));
    expect(first.items.map((i: any) => i.score)).toEqual(search.results.slice(0, 2).map((r: any) => r.score));
  });

  test("bad input is a 400 with a message", async () => {
    for (const qs of [
      "usage=sometimes",
      "limit=abc",
      "limit=0",
      "from=yesterday",
      "to=2026-13-45",
      "cursor=bm90LWEtY3Vyc29y",
      "sort=random",
      "sort=relevance",
      "min_strength=-1",
      "type=gossip",
      "colour=red",
    ]) {
      const res = await get(`/memories/list?${qs}`);
      expect({ qs, status: res.status }).toEqual({ qs, status: 400 });
      const body = await res.json();
      expect(body.error.message.length).toBeGreaterThan(5);
    }
    const res = await get("/memories/list?from=2026-02-01&to=2026-01-01");
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toContain("from is after to");
  });

  test("data routes need the token from another host; the page shell does not", async () => {
    for (const path of ["/memories/list", "/memories/count", "/memories/facets", `/memories/detail?id=${ids.a}`]) {
      expect((await requestFrom("127.0.0.2", `${srv.url}${path}`)).status).toBe(401);
      expect((await requestFrom("127.0.0.2", `${srv.url}${path}`, { headers: { authorization: `Bearer ${srv.token}` } })).status).toBe(200);
    }
    const shell = await requestFrom("127.0.0.2", `${srv.url}/memories`);
    expect(shell.status).toBe(200);
    expect(shell.headers["referrer-policy"]).toBe("no-referrer");
    expect(shell.body).not.toContain("Epsilon");
    for (const path of [
      "/favicon.svg",
      "/favicon.ico",
      "/assets/vendor/marked.js",
      "/assets/vendor/purify.js",
      "/assets/shell.js",
      "/assets/colors.js",
      "/assets/markdown.js",
      "/assets/memories/app.js",
    ]) {
      expect({ path, status: (await requestFrom("127.0.0.2", `${srv.url}${path}`)).status }).toEqual({ path, status: 200 });
    }
    expect((await get("/assets/vendor/..%2Fauth.js")).status).toBe(404);
    expect((await get("/assets/vendor/marked.esm.js")).status).toBe(404);
  });
});

describe("GET /memories/detail", () => {
  test("shows provenance, tags and links without counting as a use", async () => {
    const usage = () => dbRow(srv.services, "SELECT used_count, strength, refreshed_at FROM memories WHERE id = ?", [ids.a]);
    const events = async () => (await dbRow<{ n: number }>(srv.services, "SELECT count(*) AS n FROM memory_events"))!.n;
    const before = await usage();
    const e0 = await events();
    const res = await get(`/memories/detail?id=${ids.a.slice(0, 8)}`);
    expect(res.status).toBe(200);
    const d = await res.json();
    expect(d.memory.id).toBe(ids.a);
    expect(d.citation).toContain(ids.a.slice(0, 8));
    expect(d.domain).toBe("infra");
    expect(d.tags.map((t: any) => t.tag)).toEqual(["infra", "databases"]);
    expect(d.links).toEqual([
      expect.objectContaining({ id: ids.b, relationship: "related", weight: 0.8, direction: "out", memory_type: "decisions" }),
      expect.objectContaining({ id: ids.d, relationship: "supports", weight: 0.5, direction: "in" }),
    ]);
    expect(await usage()).toEqual(before);
    expect(await events()).toBe(e0);
    expect((await get("/memories/detail")).status).toBe(400);
    expect((await get("/memories/detail?id=ffffffff")).status).toBe(404);
  });
});

describe("POST /memories/delete", () => {
  const post = (body: unknown) =>
    fetch(`${srv.url}/memories/delete`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  test("deletes the filtered selection with its vectors and links once the count matches", async () => {
    const count = await (await get("/memories/count?project=infra")).json();
    expect(count).toEqual({ count: 3 });
    const wrong = await post({ project: "infra", confirm_count: 2 });
    expect(wrong.status).toBe(409);
    expect((await wrong.json()).error.count).toBe(3);
    expect((await list("")).total).toBe(5);

    const ok = await post({ project: "infra", confirm_count: 3 });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ deleted: 3, links_removed: 2 });
    const n = async (sql: string) => (await dbRow<{ n: number }>(srv.services, sql))!.n;
    expect(await n("SELECT count(*) AS n FROM memories")).toBe(2);
    expect(await n("SELECT count(*) AS n FROM links")).toBe(0);
    expect(await n("SELECT count(*) AS n FROM memory_vec")).toBe(2);
    // Full text: the FTS5 table on SQLite; on PostgreSQL a column of the deleted rows, gone with them.
    if (onSqlite) {
      expect(await n("SELECT count(*) AS n FROM memories_fts WHERE memories_fts MATCH 'deploy'")).toBe(0);
      expect(srv.services.index.size).toBe(2);
    }
    const search = await (await get("/search?query=deploy")).json();
    expect(search.results.map((r: any) => r.id)).not.toContain(ids.b);
  });

  test("a query selection deletes only the filtered hits", async () => {
    const { count } = await (await get("/memories/count?query=deploy&type=learnings")).json();
    expect(count).toBe(1);
    const ok = await post({ query: "deploy", type: "learnings", confirm_count: 1 });
    expect(await ok.json()).toMatchObject({ deleted: 1 });
    expect((await get(`/memories/detail?id=${ids.d}`)).status).toBe(404);
    expect((await get(`/memories/detail?id=${ids.b}`)).status).toBe(200);
  });

  test("bad bodies are a 400 and delete nothing", async () => {
    for (const body of [{}, { confirm_count: -1 }, { confirm_count: "3" }, { confirm_count: 1, usage: "maybe" }, { confirm_count: 1, colour: "red" }, [1]]) {
      const res = await post(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
    }
    expect((await list("")).total).toBe(5);
  });
});

describe("review filter (feedback marks in the browser)", () => {
  const send = async (path: string, body: unknown, method = "POST") => {
    const res = await fetch(`${srv.url}${path}`, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect({ path, status: res.status }).toEqual({ path, status: 200 });
  };

  test("review=1 finds memories marked wrong or outdated and not yet settled or retired; rows carry the marks", async () => {
    await send("/feedback", { id: ids.a, kind: "wrong", note: "port is 5434" });
    await send("/feedback", { id: ids.b, kind: "outdated" });
    // Settled: reviewed, rewritten, or retired (out of recall already: nothing left to review).
    await send("/feedback", { id: ids.c, kind: "wrong" });
    await send("/memory/review", { id: ids.c, action: "review" });
    await send("/feedback", { id: ids.d, kind: "outdated" });
    await send("/memory/review", { id: ids.d, action: "retire" });
    await send("/feedback", { id: ids.e, kind: "wrong" });
    await send("/memory", { id: ids.e, content: "Epsilon: rewritten, now right" }, "PATCH");

    const r = await list("review=1");
    expect(keys(r.items)).toEqual(["a", "b"]);
    expect(r.total).toBe(2);
    expect(r.items.map((i: { marks?: string[] }) => i.marks)).toEqual([["wrong"], ["outdated"]]);
    const all = await list("");
    const marks = Object.fromEntries(all.items.map((i: { id: string; marks?: string[] }) => [keys([i])[0], i.marks ?? null]));
    expect(marks).toEqual({ a: ["wrong"], b: ["outdated"], c: null, d: ["outdated", "retired"], e: null });
    expect(await (await get("/memories/count?review=1")).json()).toEqual({ count: 2 });
    expect(await (await get("/memories/count?review=1&project=infra&type=decisions")).json()).toEqual({ count: 1 });
    // review=0 (and empty) is no filter; with a query the search's hits are narrowed the same way.
    expect((await list("review=0")).total).toBe(5);
    expect(keys((await list("review=1&query=migrations before deploy")).items)).toContain("b");
    expect((await list("review=1&query=braise onions slowly")).items).toEqual([]);
    expect(keys((await list("query=braise onions slowly")).items)).toContain("c");
    // Unretiring d brings its outdated mark back into review.
    await send("/memory/review", { id: ids.d, action: "unretire" });
    expect(keys((await list("review=1")).items).sort()).toEqual(["a", "b", "d"]);
  });

  test("the filter reads the marks afresh: a mark another server wrote shows at once, and bulk delete honours it", async () => {
    await list("review=1"); // the cache is warm and empty
    await srv.services.storage.feedback.addEvent({ memoryId: ids.c, kind: "wrong", at: Date.now() + 1000, detail: null });
    expect(keys((await list("review=1")).items)).toEqual(["c"]);
    const del = await fetch(`${srv.url}/memories/delete`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ review: "1", confirm_count: 1 }),
    });
    expect(await del.json()).toEqual({ deleted: 1, links_removed: 0 });
    expect((await list("")).total).toBe(4);
    expect((await get(`/memories/detail?id=${ids.c}`)).status).toBe(404);
  });

  test("a bad review value is a 400", async () => {
    for (const path of ["/memories/list?review=yes", "/memories/count?review=2"]) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect((await res.json()).error.message).toContain("review");
    }
  });
});
