import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { seedGraph } from "../helpers/graph-seed";
import { requestFrom, startServer, type TestServer } from "../helpers/server";

let srv: TestServer;
let ids: Record<string, string>;
beforeAll(async () => {
  srv = await startServer();
  ids = await seedGraph(
    srv.services,
    [
      { key: "a", content: "Alpha: staging database on port 5433", project: "infra" },
      { key: "b", content: "Beta: run migrations before deploy", project: "infra", type: "decisions" },
      { key: "c", content: "Gamma: unrelated cooking note", project: "cooking" },
    ],
    [["a", "b", "related", 0.8]],
  );
});
afterAll(async () => {
  await srv.stop();
});

const get = (path: string) => fetch(`${srv.url}${path}`);
const remote = (path: string, token?: string) => requestFrom("127.0.0.2", `${srv.url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

describe("GET /graph", () => {
  test("each op answers 200 with its documented shape", async () => {
    const n = await (await get(`/graph?op=neighbors&id=${ids.a.slice(0, 8)}`)).json();
    expect(n.memory.id).toBe(ids.a);
    expect(n.neighbors).toHaveLength(1);
    expect(n.neighbors[0]).toMatchObject({ id: ids.b, short_id: ids.b.slice(0, 8), memory_type: "decisions", domain: "infra", weight: 0.8 });
    expect(n.neighbors[0].relationships).toEqual([{ relationship: "related", direction: "out", weight: 0.8 }]);

    const h = await (await get("/graph?op=hubs&limit=1")).json();
    expect(h).toMatchObject({ domain: null, count: 1 });
    expect(h.hubs[0].connections).toBe(1);

    const p = await (await get(`/graph?op=path&id=${ids.b}&target_id=${ids.a}`)).json();
    expect(p).toMatchObject({ found: true, hops: 1 });
    expect(p.path.map((m: { id: string }) => m.id)).toEqual([ids.b, ids.a]);

    const none = await get(`/graph?op=path&id=${ids.a}&target_id=${ids.c}`);
    expect(none.status).toBe(200);
    expect(await none.json()).toMatchObject({ found: false, path: [], message: expect.stringContaining("no link path") });

    const e = await (await get("/graph?op=export&type=decision&domain=Infra")).json();
    expect(Object.keys(e).sort()).toEqual(["domains", "edges", "meta", "nodes", "types"]);
    expect(e.nodes.map((x: { id: string }) => x.id)).toEqual([ids.b]);
    expect(e.meta).toMatchObject({
      matched: 1,
      nodes: 1,
      edges: 0,
      limit: 5000,
      truncated: false,
      filters: { domain: "infra", type: "decisions", tag: null, minStrength: null },
    });
  });

  test("bad input is a 400 with a message; an unknown id is a 404", async () => {
    const cases: [string, number, string][] = [
      ["/graph", 400, "op is required"],
      ["/graph?op=walk", 400, "unknown op"],
      ["/graph?op=neighbors", 400, "id is required"],
      ["/graph?op=path&id=ID_A", 400, "target_id"],
      ["/graph?op=hubs&limit=abc", 400, "limit"],
      ["/graph?op=export&limit=-5", 400, "limit"],
      ["/graph?op=export&minStrength=-1", 400, "minStrength"],
      ["/graph?op=export&minStrength=NaN", 400, "minStrength"],
      ["/graph?op=export&type=opinion", 400, "type"],
      ["/graph?op=export&min_strength=1", 400, "min_strength"],
      ["/graph?op=neighbors&id=not-an-id", 400, "id must be"],
      ["/graph?op=neighbors&id=00000000-0000-4000-8000-000000000000", 404, "no memory"],
    ];
    for (const [path, status, text] of cases) {
      const r = await get(path.replace("ID_A", ids.a));
      const body = await r.json();
      expect({ path, status: r.status }).toEqual({ path, status });
      expect(body.error.message).toContain(text);
    }
  });

  test("needs the bearer token from a non-localhost peer", async () => {
    expect((await remote("/graph?op=export")).status).toBe(401);
    expect((await remote("/graph?op=export", "wrong")).status).toBe(401);
    const ok = await remote("/graph?op=export", srv.token);
    expect(ok.status).toBe(200);
    expect(ok.json().meta.total_memories).toBe(3);
  });
});

describe("page shell and vendor files", () => {
  test("/viz and its files are served without auth to a remote peer and hold no data", async () => {
    const page = await remote("/viz");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toContain("text/html");
    expect(page.headers["content-security-policy"]).toContain("default-src 'self'");
    expect(page.body).toContain("/viz/vendor/3d-force-graph.min.js");
    expect(page.body).not.toContain("Alpha");
    expect(page.body).not.toContain(ids.a);
    for (const path of [
      "/viz/vendor/3d-force-graph.min.js",
      "/viz/vendor/force-graph.min.js",
      "/assets/viz/app.js",
      "/assets/viz/detail.js",
      "/assets/viz/graph-view.js",
      "/assets/viz/link-batch.js",
      "/assets/viz/style.css",
      "/assets/auth.js",
    ]) {
      const r = await remote(path);
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
      expect(r.headers["content-type"]).toMatch(/text\/(javascript|css)/);
    }
    expect((await remote("/viz/vendor/3d-force-graph.min.js")).body).toContain("ForceGraph3D");
  });

  test("anything outside the vendor allowlist is a 404, traversal included", async () => {
    const attempts = [
      "/viz/vendor/three.min.js",
      "/viz/vendor/3d-force-graph.js",
      "/viz/vendor/3D-FORCE-GRAPH.MIN.JS",
      "/viz/vendor/..%2F..%2Fpackage.json",
      "/viz/vendor/..%2f..%2f..%2fetc%2fpasswd",
      "/viz/vendor/%2e%2e%2fpackage.json",
      "/viz/vendor/..%5C..%5Cpackage.json",
      "/viz/vendor/.env",
      "/viz/vendor/__proto__",
      "/viz/vendor/constructor",
      "/viz/vendor/hasOwnProperty",
      "/viz/vendor/force-graph.min.js%00.txt",
      "/viz/vendor/force-graph.min.js%2F",
      "/viz/vendor/x/force-graph.min.js",
      "/viz/vendor/",
      "/assets/viz/index.html",
      "/assets/viz/..%2F..%2Fpackage.json",
    ];
    for (const path of attempts) {
      // Raw socket requests: the path reaches the server exactly as written.
      const r = await requestFrom("127.0.0.1", `${srv.url}${path}`);
      expect({ path, status: r.status }).toEqual({ path, status: 404 });
      expect(r.body).not.toContain('"dependencies"');
      expect(r.body).not.toContain("root:");
    }
    // Dot segments (plain or %2e) are resolved as URLs are (RFC 3986): ".." from
    // /viz/vendor/ lands on the /viz shell at most, never on a file of the machine.
    const shell = (await requestFrom("127.0.0.1", `${srv.url}/viz`)).body;
    for (const path of [
      "/viz/vendor/../../package.json",
      "/viz/vendor/./../../../etc/passwd",
      "/viz/vendor/..",
      "/viz/vendor/.%2e",
      "/viz/vendor/%2e%2e/%2e%2e/package.json",
    ]) {
      const r = await requestFrom("127.0.0.1", `${srv.url}${path}`);
      if (r.status === 200) expect({ path, body: r.body }).toEqual({ path, body: shell });
      else expect({ path, status: r.status }).toEqual({ path, status: 404 });
      expect(r.body).not.toContain('"dependencies"');
      expect(r.body).not.toContain("root:");
    }
  });
});
