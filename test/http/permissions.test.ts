import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { auditLog } from "../../src/core/audit";
import { createToken, hashToken } from "../../src/core/tokens";
import { dbRow, dbRows } from "../helpers/engine";
import { TOOL_NAMES } from "../../src/mcp/tools";
import { drive } from "../helpers/mcp";
import { createApp, isPublicPath } from "../../src/http/app";
import { requestFrom, startServer, type RawResponse, type TestServer } from "../helpers/server";

/**
 * The permission matrix (issue 36): every REST route and MCP tool, called as
 * {no token, wrong, revoked, expired, reader, writer, admin, a token of
 * another project}, gives the expected status, and nothing outside the
 * token's scope shows in any response. Requests come from 127.0.0.2, so the
 * localhost bypass never applies. Two projects hold distinct marker strings.
 */

const ALPHA = "MARKERALPHAzq7";
const BETA = "MARKERBETAxk3";
const PEER = "127.0.0.2";

let server: TestServer;
const tok: Record<string, string> = {};
let alphaId = "";
let betaId = "";

async function call(token: string | null, method: string, path: string, body?: unknown): Promise<RawResponse> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  return requestFrom(PEER, `${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

async function fresh(project: string, marker: string): Promise<string> {
  const r = await call(tok.admin, "POST", "/ingest", { content: `${marker} throwaway note about deploy scripts ${crypto.randomUUID()}`, project });
  expect(r.status).toBe(201);
  return r.json().id;
}

beforeAll(async () => {
  server = await startServer();
  const store = server.services.storage.tokens;
  const now = Date.now();
  for (const [name, role, projects] of [
    ["admin", "admin", undefined],
    ["writer", "writer", undefined],
    ["reader", "reader", undefined],
    ["alpha", "writer", "alpha"],
    ["revoked", "admin", undefined],
  ] as const) {
    tok[name] = (await createToken(store, { name, role, projects }, now)).token;
  }
  await store.revoke("revoked", now);
  tok.expired = "msv_expiredtokenexpiredtokenexpiredtoken00000";
  await store.insert({
    name: "expired",
    hash: hashToken(tok.expired),
    role: "admin",
    projects: null,
    createdAt: now - 10_000,
    expiresAt: now - 1,
    lastUsedAt: null,
    revokedAt: null,
  });
  tok.wrong = "msv_wrongwrongwrongwrongwrongwrongwrongwrong0";
  alphaId = await fresh("alpha", ALPHA);
  betaId = await fresh("beta", BETA);
  // A second memory per project so graph and facets have something to join.
  await fresh("alpha", ALPHA);
  await fresh("beta", BETA);
});

afterAll(async () => {
  await server?.stop();
});

type Need = "reader" | "writer" | "admin";
interface Route {
  name: string;
  need: Need;
  /** The request for a memory/project of the given side. */
  req: (side: { project: string; id: string; marker: string }) => Promise<[string, string, unknown?]> | [string, string, unknown?];
  /** A project-scoped token may use it (on its own project). */
  scoped: boolean;
}

const q = encodeURIComponent;
const ROUTES: Route[] = [
  { name: "search", need: "reader", scoped: true, req: (x) => ["GET", `/search?query=deploy&project=${x.project}`] },
  { name: "recent", need: "reader", scoped: true, req: (x) => ["GET", `/recent?project=${x.project}`] },
  { name: "memory", need: "reader", scoped: true, req: (x) => ["GET", `/memory?id=${x.id}`] },
  { name: "history", need: "reader", scoped: true, req: (x) => ["GET", `/memory/history?id=${x.id}`] },
  { name: "browser list", need: "reader", scoped: true, req: (x) => ["GET", `/memories/list?project=${x.project}`] },
  { name: "browser count", need: "reader", scoped: true, req: (x) => ["GET", `/memories/count?project=${x.project}`] },
  { name: "browser detail", need: "reader", scoped: true, req: (x) => ["GET", `/memories/detail?id=${x.id}`] },
  { name: "learnings", need: "reader", scoped: true, req: (x) => ["GET", `/learnings?project=${x.project}`] },
  { name: "identity read", need: "reader", scoped: true, req: () => ["GET", "/identity"] },
  { name: "facets", need: "reader", scoped: true, req: () => ["GET", "/memories/facets"] },
  { name: "graph", need: "reader", scoped: true, req: (x) => ["GET", `/graph?op=neighbors&id=${x.id}`] },
  { name: "dashboard data", need: "reader", scoped: true, req: () => ["GET", "/dashboard/data"] },
  { name: "account", need: "reader", scoped: false, req: () => ["GET", "/account"] },
  { name: "domain index", need: "reader", scoped: true, req: () => ["GET", "/index"] },
  { name: "anchors", need: "reader", scoped: true, req: () => ["GET", `/anchors?repo=${q("github.com/x/y")}`] },
  {
    name: "recall-index",
    need: "reader",
    scoped: true,
    req: (x) => ["POST", "/recall-index", { session_id: "s1", prompt: "deploy scripts", project: x.project }],
  },
  { name: "ingest", need: "writer", scoped: true, req: (x) => ["POST", "/ingest", { content: `${x.marker} new note on deploy`, project: x.project }] },
  {
    name: "patch",
    need: "writer",
    scoped: true,
    req: async (x) => ["PATCH", "/memory", { id: await fresh(x.project, x.marker), content: `${x.marker} corrected deploy note` }],
  },
  { name: "delete", need: "writer", scoped: true, req: async (x) => ["DELETE", `/memory?id=${await fresh(x.project, x.marker)}`] },
  { name: "bulk delete", need: "writer", scoped: true, req: (x) => ["POST", "/memories/delete", { project: x.project, from: "2999-01-01", confirm_count: 0 }] },
  { name: "stale", need: "writer", scoped: false, req: () => ["POST", "/memory/stale", { repo: "github.com/x/y", marks: [] }] },
  { name: "identity write", need: "admin", scoped: false, req: () => ["PUT", "/identity", { sections: { style: "terse" } }] },
  // Receipts and feedback (issue 37, merged after the matrix was written).
  { name: "receipts", need: "reader", scoped: false, req: () => ["GET", "/recall/receipts"] },
  { name: "recall sessions", need: "reader", scoped: false, req: () => ["GET", "/recall/sessions"] },
  { name: "recall used", need: "writer", scoped: false, req: () => ["POST", "/recall/used", { session_id: "s1", ids: [] }] },
  { name: "feedback", need: "writer", scoped: true, req: (x) => ["POST", "/feedback", { id: x.id, kind: "useful" }] },
  { name: "review", need: "writer", scoped: true, req: (x) => ["POST", "/memory/review", { id: x.id, action: "review" }] },
  {
    name: "restore",
    need: "writer",
    scoped: true,
    req: async (x) => {
      // A memory with an earlier version to restore.
      const id = await fresh(x.project, x.marker);
      expect((await call(tok.admin, "PATCH", "/memory", { id, content: `${x.marker} changed so it has a version` })).status).toBe(200);
      return ["POST", "/memory/restore", { id, version: 1 }];
    },
  },
  { name: "token list", need: "admin", scoped: false, req: () => ["GET", "/tokens"] },
  { name: "audit", need: "admin", scoped: false, req: () => ["GET", "/audit"] },
];

const RANK: Record<Need, number> = { reader: 0, writer: 1, admin: 2 };
const ALPHA_SIDE = () => ({ project: "alpha", id: alphaId, marker: ALPHA });
const BETA_SIDE = () => ({ project: "beta", id: betaId, marker: BETA });

describe("permission matrix: REST", () => {
  // A route added without a row here fails this until it is listed (or named below with why it is left out).
  test("every data route of the app is in the matrix", async () => {
    const listed = new Set<string>();
    for (const r of ROUTES) {
      const [method, path] = await r.req(ALPHA_SIDE());
      listed.add(`${method} ${path.split("?")[0]}`);
    }
    const left = new Set([
      "GET /health/llm",
      "GET /openapi.json", // no memory data; reader like every GET
      "GET /mcp",
      "POST /mcp",
      "DELETE /mcp",
      "GET /sse",
      "POST /messages", // the MCP transports: the tool matrix below
      "GET /context",
      "PUT /context",
      "DELETE /context",
      "DELETE /identity", // identity's alias and reset: the identity rows' rules
      "POST /distill",
      "GET /lessons", // same rules as ingest and learnings (scope.ts)
      "POST /tokens",
      "DELETE /tokens/:name", // admin, beside token list
    ]);
    const missing: string[] = [];
    const routes = createApp(server.services).routes as { method: string; path: string }[];
    // The list of routes left out names only routes that exist.
    expect([...left].filter((k) => !routes.some((r) => `${r.method} ${r.path}` === k))).toEqual([]);
    for (const r of routes) {
      const key = `${r.method} ${r.path}`;
      if (r.method === "HEAD" || isPublicPath(r.method, r.path) || r.path.startsWith("/assets/") || r.path.includes("/vendor/")) continue;
      if (!listed.has(key) && !left.has(key)) missing.push(key);
    }
    expect(missing).toEqual([]);
  });

  for (const route of ROUTES) {
    test(`${route.name}: refused without a valid token`, async () => {
      for (const who of [null, "wrong", "revoked", "expired"] as const) {
        const [method, path, body] = await route.req(ALPHA_SIDE());
        const r = await call(who === null ? null : tok[who], method, path, body);
        expect({ who, status: r.status }).toEqual({ who, status: 401 });
        expect(r.json().error.code).toBe("unauthorized");
        expect(r.body).not.toContain(ALPHA);
      }
    });

    test(`${route.name}: by role`, async () => {
      for (const role of ["reader", "writer", "admin"] as const) {
        const [method, path, body] = await route.req(ALPHA_SIDE());
        const r = await call(tok[role], method, path, body);
        if (RANK[role] >= RANK[route.need])
          expect({ role, status: r.status, body: r.status >= 400 ? r.body : "" }).toEqual({ role, status: r.status < 400 ? r.status : 200, body: "" });
        else {
          expect({ role, status: r.status }).toEqual({ role, status: 403 });
          expect(r.json().error.code).toBe("forbidden");
        }
      }
    });

    test(`${route.name}: a token of project alpha`, async () => {
      const own = await route.req(ALPHA_SIDE());
      const mine = await call(tok.alpha, own[0], own[1], own[2]);
      const allowed = route.scoped && RANK.writer >= RANK[route.need];
      if (allowed)
        expect({ status: mine.status, body: mine.status >= 400 ? mine.body : "" }).toEqual({ status: mine.status < 400 ? mine.status : 200, body: "" });
      else expect(mine.status).toBe(403);
      expect(mine.body).not.toContain(BETA);
      // The other project's side: refused (403), or an id that does not exist (404); never its data.
      const other = await route.req(BETA_SIDE());
      const theirs = await call(tok.alpha, other[0], other[1], other[2]);
      // Routes naming no project or id answer with the token's own scope, whichever side asks.
      if (!["identity read", "facets", "domain index", "anchors", "dashboard data"].includes(route.name)) {
        expect([403, 404]).toContain(theirs.status);
      }
      expect(theirs.body).not.toContain(BETA);
    });
  }

  test("a scoped token without a project: its only project is used, never the others", async () => {
    const r = await call(tok.alpha, "GET", "/search?query=deploy");
    expect(r.status).toBe(200);
    expect(r.body).toContain(ALPHA);
    expect(r.body).not.toContain(BETA);
    const recent = await call(tok.alpha, "GET", "/recent");
    expect(recent.body).toContain(ALPHA);
    expect(recent.body).not.toContain(BETA);
  });

  test("memories record the member that created them", async () => {
    const r = await call(tok.writer, "POST", "/ingest", { content: "created by the writer token, about release notes", project: "alpha" });
    expect(r.status).toBe(201);
    const id = r.json().id;
    expect(await dbRow(server.services, "SELECT created_by FROM memories WHERE id = ?", [id])).toEqual({ created_by: "writer" });
  });

  test("the audit log names who did what; only admin reads it", async () => {
    const id = await fresh("alpha", ALPHA);
    expect((await call(tok.writer, "DELETE", `/memory?id=${id}`)).status).toBe(200);
    // Audit rows are written in batches off the request path: wait for this one's.
    await auditLog(server.services).flush();
    const page = (await call(tok.admin, "GET", "/audit?action=memory.deleted")).json();
    expect(page.entries.some((e: any) => e.actor === "writer" && e.target === id && e.peer === PEER)).toBe(true);
    const refused = (await call(tok.admin, "GET", "/audit?action=auth.refused")).json();
    expect(refused.entries.length).toBeGreaterThan(0);
    expect(JSON.stringify(refused)).not.toContain(tok.wrong);
    expect((await call(tok.reader, "GET", "/audit")).status).toBe(403);
  });
});

describe("permission matrix: MCP tools", () => {
  const ALL = [
    "memsvc_search",
    "memsvc_get",
    "memsvc_recent",
    "memsvc_ingest",
    "memsvc_learnings",
    "memsvc_identity",
    "memsvc_index",
    "memsvc_graph",
    "memsvc_update",
    "memsvc_delete",
    "memsvc_history",
    "memsvc_feedback",
    "memsvc_lessons",
  ];
  const WRITES = new Set(["memsvc_ingest", "memsvc_update", "memsvc_delete", "memsvc_feedback"]);
  const SCOPED_OK = new Set([
    "memsvc_search",
    "memsvc_get",
    "memsvc_recent",
    "memsvc_ingest",
    "memsvc_learnings",
    "memsvc_identity",
    "memsvc_index",
    "memsvc_graph",
    "memsvc_update",
    "memsvc_delete",
    "memsvc_history",
    "memsvc_feedback",
    "memsvc_lessons",
  ]);

  test("every tool the server lists is in the matrix", () => {
    expect([...ALL].sort()).toEqual([...TOOL_NAMES].sort());
  });

  async function argsFor(tool: string, side: { project: string; id: string; marker: string }): Promise<Record<string, unknown>> {
    switch (tool) {
      case "memsvc_search":
        return { query: "deploy", project: side.project };
      case "memsvc_recent":
      case "memsvc_learnings":
      case "memsvc_lessons":
        return { project: side.project };
      case "memsvc_get":
      case "memsvc_history":
        return { id: side.id };
      case "memsvc_feedback":
        return { id: side.id, kind: "useful" };
      case "memsvc_ingest":
        return { content: `${side.marker} from mcp about deploys`, project: side.project };
      case "memsvc_update":
        return { id: await fresh(side.project, side.marker), content: `${side.marker} updated over mcp` };
      case "memsvc_delete":
        return { id: await fresh(side.project, side.marker) };
      case "memsvc_graph":
        return { operation: "neighbors", id: side.id };
      default:
        return {};
    }
  }

  for (const kind of ["http", "sse"] as const) {
    test(`${kind}: refused without a valid token`, async () => {
      for (const who of [null, "wrong", "revoked", "expired"] as const) {
        const path = kind === "http" ? "/mcp" : "/sse";
        const method = kind === "http" ? "POST" : "GET";
        const r = await call(
          who === null ? null : tok[who],
          method,
          path,
          kind === "http"
            ? {
                jsonrpc: "2.0",
                id: 1,
                method: "initialize",
                params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "x", version: "1" } },
              }
            : undefined,
        );
        expect({ who, status: r.status }).toEqual({ who, status: 401 });
      }
    });

    for (const who of ["reader", "writer", "alpha"] as const) {
      test(`${kind}: every tool as ${who}`, async () => {
        const steps = [];
        for (const tool of ALL) steps.push({ call: tool, args: await argsFor(tool, ALPHA_SIDE()), label: `own:${tool}` });
        if (who === "alpha") for (const tool of ALL) steps.push({ call: tool, args: await argsFor(tool, BETA_SIDE()), label: `other:${tool}` });
        const [results] = await drive(server.url, kind, { token: tok[who], steps });
        for (const r of results) {
          const [side, tool] = r.label!.split(":");
          expect(r.error).toBeUndefined();
          const allowed =
            who === "reader"
              ? !WRITES.has(tool)
              : who === "writer"
                ? true
                : (side === "own" || tool === "memsvc_identity" || tool === "memsvc_index") && SCOPED_OK.has(tool);
          expect({ label: r.label, isError: r.isError ?? false }).toEqual({ label: r.label, isError: !allowed });
          // Lower-cased too: tags derived from the content (domain names) are lower case.
          if (who === "alpha")
            expect({ label: r.label, leak: r.text?.toLowerCase().includes(BETA.toLowerCase()) ?? false }).toEqual({ label: r.label, leak: false });
        }
      });
    }
  }
});

describe("a project-scoped token: answers narrowed to its projects", () => {
  // a1 - a2 within alpha; a1 - b1 - b2 - a3 across beta; a2 - n (a memory of no project).
  const id: Record<string, string> = {};
  const REPO = "github.com/x/scoped";
  const lower = (body: string) => body.toLowerCase();
  const noBeta = (body: string) => {
    expect(lower(body)).not.toContain(BETA.toLowerCase());
    expect(body).not.toContain("NOPROJECTqv5");
  };
  const ingest = async (project: string | undefined, text: string, anchored = false) => {
    const body: Record<string, unknown> = { content: `${text} scoped graph note about release pipelines ${crypto.randomUUID()}` };
    if (project) body.project = project;
    if (anchored) body.anchors = { repo: REPO, branch: "main", commit: "abcdef1", paths: ["src/a.ts"] };
    const r = await call(tok.admin, "POST", "/ingest", body);
    expect(r.status).toBe(201);
    return r.json().id as string;
  };
  const alphaCount = async () => (await call(tok.admin, "GET", "/memories/count?project=alpha")).json().count as number;

  beforeAll(async () => {
    id.a1 = await ingest("alpha", ALPHA, true);
    id.a2 = await ingest("alpha", ALPHA);
    id.a3 = await ingest("alpha", ALPHA);
    id.b1 = await ingest("beta", BETA, true);
    id.b2 = await ingest("beta", BETA);
    id.n = await ingest(undefined, "NOPROJECTqv5");
    // Ingest links a memory to its nearest ones in its project: only the links below, so every count is known.
    for (const x of Object.values(id)) await dbRows(server.services, "DELETE FROM links WHERE from_id = ? OR to_id = ?", [x, x]);
    const link = (fromId: string, toId: string) => ({ fromId, toId, relationship: "related", weight: 0.9 });
    await server.services.storage.graph.addLinks(
      [link(id.a1, id.a2), link(id.a1, id.b1), link(id.b1, id.b2), link(id.b2, id.a3), link(id.a2, id.n)],
      Date.now(),
    );
  });

  test("search, recent, GET /memory and the memory browser count a memory's connections within the scope", async () => {
    // a1 links to a2 (alpha) and b1 (beta): 2 for an admin, 1 for alpha's token.
    const connectionsOf = async (token: string) => {
      const seen: number[] = [];
      const search = (await call(token, "GET", `/search?query=${encodeURIComponent("scoped graph note release pipelines")}&project=alpha&limit=50`)).json();
      seen.push(search.results.find((m: any) => m.id === id.a1).connections);
      const recent = (await call(token, "GET", "/recent?project=alpha&limit=50")).json();
      seen.push(recent.results.find((m: any) => m.id === id.a1).connections);
      seen.push((await call(token, "GET", `/memory?id=${id.a1}`)).json().memory.connections);
      const list = (await call(token, "GET", "/memories/list?project=alpha&limit=100")).json();
      seen.push(list.items.find((m: any) => m.id === id.a1).connections);
      seen.push((await call(token, "GET", `/memories/detail?id=${id.a1}`)).json().memory.connections);
      return seen;
    };
    expect(await connectionsOf(tok.admin)).toEqual([2, 2, 2, 2, 2]);
    expect(await connectionsOf(tok.alpha)).toEqual([1, 1, 1, 1, 1]);
  });

  test("neighbors: only in-scope neighbours, the centre's connections counted within the scope; another project's memory is an unknown id", async () => {
    const admin = (await call(tok.admin, "GET", `/graph?op=neighbors&id=${id.a1}`)).json();
    expect(admin.neighbors.map((n: any) => n.id).sort()).toEqual([id.a2, id.b1].sort());
    const r = await call(tok.alpha, "GET", `/graph?op=neighbors&id=${id.a1}`);
    expect(r.status).toBe(200);
    noBeta(r.body);
    const j = r.json();
    expect(j.neighbors.map((n: any) => n.id)).toEqual([id.a2]);
    expect(j.total).toBe(1);
    expect(j.memory.connections).toBe(1);
    // a2's links: a1 (alpha) and n (no project): one within the scope.
    expect(j.neighbors[0].connections).toBe(1);
    const theirs = await call(tok.alpha, "GET", `/graph?op=neighbors&id=${id.b1}`);
    const unknown = await call(tok.alpha, "GET", `/graph?op=neighbors&id=00000000-0000-4000-8000-000000000000`);
    expect(theirs.status).toBe(404);
    expect(theirs.json().error.message.replace(id.b1, "X")).toBe(unknown.json().error.message.replace("00000000-0000-4000-8000-000000000000", "X"));
    const prefix = await call(tok.alpha, "GET", `/graph?op=neighbors&id=${id.b1.slice(0, 8)}`);
    expect(prefix.status).toBe(404);
    expect(prefix.json().error.message).toBe(`no memory with id prefix ${id.b1.slice(0, 8)}`);
  });

  test("path: only through in-scope memories", async () => {
    const admin = (await call(tok.admin, "GET", `/graph?op=path&id=${id.a1}&target_id=${id.a3}`)).json();
    expect(admin).toMatchObject({ found: true, hops: 3 });
    const r = await call(tok.alpha, "GET", `/graph?op=path&id=${id.a1}&target_id=${id.a3}`);
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({ found: false, hops: null, path: [] });
    noBeta(r.body);
    expect((await call(tok.alpha, "GET", `/graph?op=path&id=${id.a2}&target_id=${id.a1}`)).json()).toMatchObject({ found: true, hops: 1 });
    expect((await call(tok.alpha, "GET", `/graph?op=path&id=${id.a1}&target_id=${id.b2}`)).status).toBe(404);
  });

  test("hubs: in-scope memories ranked by links within the scope", async () => {
    const r = await call(tok.alpha, "GET", "/graph?op=hubs&limit=100");
    expect(r.status).toBe(200);
    noBeta(r.body);
    const hubs = r.json().hubs as any[];
    expect(hubs.every((h) => h.project === "alpha")).toBe(true);
    const byId = new Map(hubs.map((h) => [h.id, h.connections]));
    // a1: a2 only (b1 is beta's); a2: a1 only (n has no project); a3: none within the scope, so no hub.
    expect(byId.get(id.a1)).toBe(1);
    expect(byId.get(id.a2)).toBe(1);
    expect(byId.has(id.a3)).toBe(false);
  });

  test("export (/viz): scope's nodes, edges between them, totals and counts within the scope", async () => {
    const r = await call(tok.alpha, "GET", "/graph?op=export&limit=1000");
    expect(r.status).toBe(200);
    noBeta(r.body);
    const g = r.json();
    const total = await alphaCount();
    expect(g.nodes.every((n: any) => n.project === "alpha")).toBe(true);
    expect(g.meta.total_memories).toBe(total);
    expect(g.meta.matched).toBe(total);
    expect(g.domains.reduce((a: number, d: any) => a + d.memories, 0)).toBe(total);
    expect(g.types.reduce((a: number, t: any) => a + t.memories, 0)).toBe(total);
    // Links with both ends in alpha, as the admin's whole export shows them.
    const all = (await call(tok.admin, "GET", "/graph?op=export&limit=1000")).json();
    const alphaIds = new Set(all.nodes.filter((n: any) => n.project === "alpha").map((n: any) => n.id));
    const within = all.edges.filter((e: any) => alphaIds.has(e.source) && alphaIds.has(e.target));
    expect(all.meta.total_links).toBeGreaterThan(within.length);
    expect(g.meta.total_links).toBe(within.length);
    expect(g.edges.length).toBe(within.length);
    expect(g.edges).toContainEqual({ source: id.a1, target: id.a2, relationship: "related", weight: 0.9 });
    expect(g.nodes.find((n: any) => n.id === id.a1).connections).toBe(1);
  });

  test("facets, the domain index and anchors: figures and lists of the scope alone", async () => {
    const total = await alphaCount();
    const f = await call(tok.alpha, "GET", "/memories/facets");
    expect(f.status).toBe(200);
    noBeta(f.body);
    expect(f.json().projects).toEqual([{ name: "alpha", count: total }]);
    expect(f.json().domains.reduce((a: number, d: any) => a + d.count, 0)).toBeLessThanOrEqual(total);
    const idx = await call(tok.alpha, "GET", "/index");
    expect(idx.status).toBe(200);
    noBeta(idx.body);
    expect(idx.json().totals).toMatchObject({ memories: total, projects: 1 });
    expect(idx.json().projects.map((p: any) => p.project)).toEqual(["alpha"]);
    const admin = (await call(tok.admin, "GET", `/anchors?repo=${q(REPO)}`)).json();
    expect(admin.anchors.map((a: any) => a.id).sort()).toEqual([id.a1, id.b1].sort());
    const anchors = await call(tok.alpha, "GET", `/anchors?repo=${q(REPO)}`);
    expect(anchors.json()).toMatchObject({ count: 1, anchors: [{ id: id.a1 }] });
  });

  test("memory browser detail lists only links within the scope", async () => {
    const r = await call(tok.alpha, "GET", `/memories/detail?id=${id.a1}`);
    expect(r.status).toBe(200);
    noBeta(r.body);
    expect(r.json().links.map((l: any) => l.id)).toEqual([id.a2]);
  });

  test("recall-index: the token's project is filled in, another refused; only its memories are candidates", async () => {
    const other = await call(tok.alpha, "POST", "/recall-index", { session_id: "scoped-1", prompt: "release pipelines scoped graph note", project: "beta" });
    expect(other.status).toBe(403);
    for (const project of [undefined, "alpha"]) {
      const r = await call(tok.alpha, "POST", "/recall-index?explain=true", {
        session_id: `scoped-${project}`,
        prompt: "release pipelines scoped graph note",
        project,
      });
      expect(r.status).toBe(200);
      noBeta(r.body);
      expect(r.body).not.toContain(id.n);
      for (const shown of r.json().shown) expect((await call(tok.admin, "GET", `/memories/detail?id=${shown}`)).json().memory.project).toBe("alpha");
    }
  });

  test("dashboard data: every figure of alpha alone; nightly runs, the account and the capture backlog left out", async () => {
    // A recall in beta (admin) so the receipts hold another project's tokens; alpha's came from the recall-index test above.
    const recall = await call(tok.admin, "POST", "/recall-index", { session_id: "dash-beta", prompt: "release pipelines scoped graph note", project: "beta" });
    expect(recall.status).toBe(200);
    // Feedback on a memory of each project: the scoped counts hold alpha's alone.
    const wrongs = async (token: string) => (await call(token, "GET", "/dashboard/data?days=7")).json().receipts.feedback.wrong as number;
    const [alphaWrong, allWrong] = [await wrongs(tok.alpha), await wrongs(tok.admin)];
    expect((await call(tok.admin, "POST", "/feedback", { id: id.a2, kind: "wrong" })).status).toBe(200);
    expect((await call(tok.admin, "POST", "/feedback", { id: id.b2, kind: "wrong" })).status).toBe(200);
    expect([await wrongs(tok.alpha), await wrongs(tok.admin)]).toEqual([alphaWrong + 1, allWrong + 2]);
    const r = await call(tok.alpha, "GET", "/dashboard/data?days=7");
    expect(r.status).toBe(200);
    noBeta(r.body);
    const d = r.json();
    const all = (await call(tok.admin, "GET", "/dashboard/data?days=7")).json();
    expect({ nightly: d.nightly, account: d.account, backlog: d.backlog, scope: d.scope }).toEqual({
      nightly: null,
      account: null,
      backlog: null,
      scope: ["alpha"],
    });
    expect(Array.isArray(all.nightly)).toBe(true);
    expect(all.scope).toBeNull();
    // Counts: alpha's, as an admin reads them per project (and less than the store's).
    const total = await alphaCount();
    expect(d.counts.memories).toBe(total);
    expect(all.counts.memories).toBeGreaterThan(total);
    const idx = (await call(tok.admin, "GET", "/index")).json();
    expect(d.counts.learnings).toBe(idx.projects.find((p: any) => p.project === "alpha").learnings);
    const graph = (await call(tok.admin, "GET", "/graph?op=export&limit=1000")).json();
    const alphaIds = new Set(graph.nodes.filter((n: any) => n.project === "alpha").map((n: any) => n.id));
    expect(d.counts.links).toBe(graph.edges.filter((e: any) => alphaIds.has(e.source) && alphaIds.has(e.target)).length);
    const scopedGraph = (await call(tok.alpha, "GET", "/graph?op=export&limit=1000")).json();
    expect(d.counts.domains).toBeLessThanOrEqual(all.counts.domains);
    expect(d.domains.top.reduce((a: number, x: any) => a + x.memories, 0) + d.domains.other.memories).toBe(total);
    expect(d.domains.primary_domains).toBe(scopedGraph.domains.length);
    expect(d.growth.base + d.growth.days.reduce((a: number, x: any) => a + x.added, 0)).toBe(total);
    const neverShown = await dbRow<{ n: number }>(server.services, "SELECT count(*) AS n FROM memories WHERE project = 'alpha' AND shown_count = 0");
    expect(d.recall.never_shown).toBe(Number(neverShown!.n));
    // Recall adoption and receipts: only events of alpha's memories, only receipts of project alpha.
    const shown = await dbRow<{ n: number }>(
      server.services,
      "SELECT count(*) AS n FROM memory_events e JOIN memories m ON m.id = e.memory_id WHERE e.kind = 'shown' AND m.project = 'alpha'",
    );
    expect(d.recall.showings).toBe(Number(shown!.n));
    expect(all.recall.showings).toBeGreaterThan(d.recall.showings);
    const receipts = (await call(tok.admin, "GET", "/recall/receipts?project=alpha&kind=recall&limit=200")).json().receipts as any[];
    expect(receipts.length).toBeGreaterThan(0);
    expect(d.receipts.tokens).toBe(receipts.reduce((a, x) => a + x.tokens, 0));
    expect(all.receipts.tokens).toBeGreaterThan(d.receipts.tokens);
    expect(d.receipts.shown_never_used.every((m: any) => m.project === "alpha")).toBe(true);
  });

  test("the account, receipts and recall sessions stay refused", async () => {
    for (const path of ["/account", "/recall/receipts", "/recall/sessions"]) {
      const r = await call(tok.alpha, "GET", path);
      expect({ path, status: r.status }).toEqual({ path, status: 403 });
    }
  });
});

describe("revocation", () => {
  test("a revoked token is refused at its next request; a session it opened cannot be used by another member", async () => {
    const store = server.services.storage.tokens;
    const { token } = await createToken(store, { name: "shortlived", role: "reader" }, Date.now());
    expect((await call(token, "GET", "/recent?project=alpha")).status).toBe(200);
    await store.revoke("shortlived", Date.now());
    const r = await call(token, "GET", "/recent?project=alpha");
    expect(r.status).toBe(401);
    expect(r.json().error.message).toContain("revoked");
  });
});

describe("audit of feedback", () => {
  test("feedback through REST and MCP is audited as memory.changed under the member's name", async () => {
    const id = await fresh("alpha", ALPHA);
    expect((await call(tok.writer, "POST", "/feedback", { id, kind: "outdated", note: "the deploy script moved" })).status).toBe(200);
    const [results] = await drive(server.url, "http", { token: tok.alpha, steps: [{ call: "memsvc_feedback", args: { id, kind: "useful" }, label: "fb" }] });
    expect(results[0].isError ?? false).toBe(false);
    await auditLog(server.services).flush();
    const entries = (await call(tok.admin, "GET", "/audit?action=memory.changed")).json().entries.filter((e: any) => e.target === id);
    expect(entries.map((e: any) => [e.actor, JSON.parse(e.detail).feedback]).sort()).toEqual([
      ["alpha", "useful"],
      ["writer", "outdated"],
    ]);
  });
});
