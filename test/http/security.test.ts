import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { requestFrom, startServer, type TestServer } from "../helpers/server";
import { dbRows } from "../helpers/engine";

/**
 * What auth.test.ts leaves out: DNS-rebinding Host and Origin variants on
 * every kind of endpoint (MCP included), wrong tokens on the MCP transports,
 * ?token= on page shells, and that no token, right or wrong, reaches the log.
 */
let srv: TestServer;
beforeAll(async () => {
  srv = await startServer({ hostname: "0.0.0.0" });
});
afterAll(() => srv.stop());

const WRONG = "wrong-token-that-must-never-be-logged-5f3a9c";
const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "sec", version: "1" } },
});
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** One request per kind of endpoint: read, write, page-backed data, and both MCP transports. */
const TARGETS: { method: string; path: string; headers?: Record<string, string>; body?: string }[] = [
  { method: "GET", path: "/recent" },
  {
    method: "POST",
    path: "/ingest",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ content: "Stored only through a loopback name or origin." }),
  },
  {
    method: "PUT",
    path: "/identity",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ sections: { rebind: "Written only through a loopback name or origin." } }),
  },
  { method: "GET", path: "/graph?op=export" },
  { method: "GET", path: "/dashboard/data" },
  { method: "POST", path: "/messages?sessionId=00000000-0000-4000-8000-000000000000", headers: { "content-type": "application/json" }, body: initialize },
  { method: "POST", path: "/mcp", headers: MCP_HEADERS, body: initialize },
];

const send = (from: string, t: (typeof TARGETS)[number], headers: Record<string, string>) =>
  requestFrom(from, `${srv.url}${t.path}`, { method: t.method, headers: { ...t.headers, ...headers }, body: t.body });

describe("DNS rebinding and cross-site guard on the localhost bypass", () => {
  const hostile = [
    "localhost.evil.com",
    "127.0.0.1.nip.io",
    "127.0.0.1.nip.io:8787",
    "localhost.",
    "0.0.0.0",
    "[::ffff:127.0.0.1]",
    "evil.com",
    "LOCALHOST.EVIL.COM",
    "127.1",
    "2130706433",
  ];
  // Not a host at all (Bun cannot even build the request URL): a 400, still before any handler.
  const malformed = ["localhost:8787.evil.com", "localhost:abc", "[::1", "a b"];
  const friendly = () => ["localhost", "LOCALHOST", "LocalHost:8787", `127.0.0.1:${srv.port}`, "[::1]:80", "[::1]", "app.localhost:1234"];

  test("a Host naming anything but loopback is 403 on every endpoint kind and writes nothing; loopback spellings pass", async () => {
    const count = async () => (await dbRows<{ n: number }>(srv.services, "SELECT count(*) AS n FROM memories"))[0].n;
    const before = await count();
    for (const t of TARGETS) {
      for (const host of hostile) {
        const res = await send("127.0.0.1", t, { host });
        expect({ path: t.path, host, status: res.status }).toEqual({ path: t.path, host, status: 403 });
        expect(res.json().error).toMatchObject({ code: "forbidden", message: expect.stringContaining("DNS rebinding") });
      }
    }
    for (const t of TARGETS) {
      for (const host of malformed) {
        const res = await send("127.0.0.1", t, { host });
        expect({ path: t.path, host, status: res.status }).toEqual({ path: t.path, host, status: 400 });
        expect(res.json().error.message).toContain("Host");
      }
    }
    expect(await count()).toBe(before);
    expect(existsSync(join(srv.services.config.paths.identity, "rebind.md"))).toBe(false);
    for (const t of TARGETS) {
      for (const host of friendly()) {
        const res = await send("127.0.0.1", t, { host });
        expect({ path: t.path, host, refused: res.status === 403 || res.status === 401 }).toEqual({ path: t.path, host, refused: false });
      }
    }
    expect(await count()).toBe(before + friendly().length);
  });

  test("a cross-site Origin is 403 on every endpoint kind; loopback origins pass", async () => {
    const before = (await dbRows<{ n: number }>(srv.services, "SELECT count(*) AS n FROM memories"))[0].n;
    const origins = [
      "http://localhost.evil.com",
      "http://127.0.0.1.nip.io:8787",
      "https://evil.example",
      "null",
      "file://",
      "chrome-extension://abcdef",
      "http://localhost@evil.com",
      "not a url",
    ];
    for (const t of TARGETS) {
      for (const origin of origins) {
        const res = await send("127.0.0.1", t, { origin });
        expect({ path: t.path, origin, status: res.status }).toEqual({ path: t.path, origin, status: 403 });
      }
      for (const origin of [`http://localhost:${srv.port}`, "HTTP://LOCALHOST", `http://[::1]:${srv.port}`, `http://127.0.0.1:${srv.port}`]) {
        expect({ path: t.path, origin, status: (await send("127.0.0.1", t, { origin })).status === 403 }).toEqual({ path: t.path, origin, status: false });
      }
    }
    const after = (await dbRows<{ n: number }>(srv.services, "SELECT count(*) AS n FROM memories"))[0].n;
    // Only the loopback-origin ingests got in.
    expect(after - before).toBe(4);
  });
});

describe("tokens", () => {
  test("remote callers with a wrong, empty or malformed token get 401 on every endpoint kind, MCP included", async () => {
    for (const t of TARGETS) {
      for (const authorization of [
        `Bearer ${WRONG}`,
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        `Bearer ${srv.token}x`,
        `Bearer ${srv.token.slice(0, -1)}`,
        `Token ${srv.token}`,
        `Bearer ${srv.token} extra`,
      ]) {
        const res = await send("127.0.0.2", t, { authorization });
        expect({ path: t.path, authorization: authorization.slice(0, 12), status: res.status }).toEqual({
          path: t.path,
          authorization: authorization.slice(0, 12),
          status: 401,
        });
        expect(res.json().error.code).toBe("unauthorized");
        expect(res.body).not.toContain(srv.token);
      }
      const sse = await requestFrom("127.0.0.2", `${srv.url}/sse`, { headers: { authorization: `Bearer ${WRONG}` } });
      expect(sse.status).toBe(401);
    }
  });

  test("?token= opens page shells for remote browsers but never authorizes the API; neither token is logged", async () => {
    for (const page of ["/viz", "/identity/ui", "/dashboard"]) {
      const res = await requestFrom("127.0.0.2", `${srv.url}${page}?token=${srv.token}`);
      expect(res.status).toBe(200);
      // The shell holds no data and does not echo the token back.
      expect(res.body).not.toContain(srv.token);
    }
    for (const api of ["/identity", "/graph?op=hubs", "/dashboard/data", "/account", "/sse", "/mcp"]) {
      const sep = api.includes("?") ? "&" : "?";
      expect((await requestFrom("127.0.0.2", `${srv.url}${api}${sep}token=${srv.token}`)).status).toBe(401);
    }
    // Failed attempts (wrong tokens, ?token= on the API) above and in the tests before: none is in the log.
    const log = JSON.stringify(srv.services.logs);
    expect(log).not.toContain(srv.token);
    expect(log).not.toContain(WRONG);
  });
});
