import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http from "node:http";
import { ingestMemory } from "../../src/core/ingest";
import { createApp } from "../../src/http/app";
import { closeAll, mcpSessionCount } from "../../src/mcp";
import { drive } from "../helpers/mcp";
import { BUN, childEnv, freePort, startProcess, tempHome } from "../helpers/process";
import { makeServices } from "../helpers/services";
import { requestFrom, startServer, type TestServer } from "../helpers/server";
import { onPostgres } from "../helpers/engine";

let srv: TestServer;
const bearer = () => ({ authorization: `Bearer ${srv.token}` });

beforeAll(async () => {
  srv = await startServer();
  await ingestMemory(srv.services, { content: "Keepalive comments keep SSE sessions open across idle periods.", project: "memsvc" });
});
afterAll(() => srv.stop());

async function until(check: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await Bun.sleep(50);
  }
  return check();
}

interface OpenStream {
  status: number;
  /** The session id named by the endpoint event (200 only). */
  sessionId: string | null;
  body: string;
  close(): void;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
}

/** GET /sse from a chosen source address; reads only up to the endpoint event, leaving the stream open. */
function openSse(localAddress: string, headers: Record<string, string> = {}): Promise<OpenStream> {
  const u = new URL(`${srv.url}/sse`);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: Number(u.port), path: u.pathname, headers: { accept: "text/event-stream", ...headers }, localAddress },
      (res) => {
        let body = "";
        let done = false;
        let endedResolve!: () => void;
        const ended = new Promise<void>((r) => (endedResolve = r));
        res.setEncoding("utf8");
        const settle = () => {
          if (done) return;
          done = true;
          const m = /event: endpoint\ndata: \/messages\?sessionId=([0-9a-f-]+)\n/.exec(body);
          resolve({ status: res.statusCode ?? 0, sessionId: m ? m[1] : null, body, close: () => req.destroy(), ended });
        };
        res.on("data", (c) => {
          body += c;
          if (res.statusCode !== 200 || body.includes("\n\n")) settle();
        });
        res.on("end", () => {
          settle();
          endedResolve();
        });
        res.on("error", () => endedResolve());
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});
const initialized = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });
const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };

describe("sessions", () => {
  test("20 concurrent sessions on each transport each call a tool; all end cleanly when the clients go", async () => {
    const steps = [{ label: "search", call: "memsvc_search", args: { query: "keepalive idle sessions" } }];
    const [sse, streamable] = await Promise.all([drive(srv.url, "sse", { sessions: 20, steps }), drive(srv.url, "http", { sessions: 20, steps })]);
    for (const results of [...sse, ...streamable]) {
      expect(results).toHaveLength(1);
      expect(results[0].error).toBeUndefined();
      expect(results[0].isError).toBe(false);
      expect(results[0].text).toContain("Keepalive comments keep SSE sessions open");
    }
    expect(await until(() => mcpSessionCount(srv.services).sse === 0 && mcpSessionCount(srv.services).streamable === 0)).toBe(true);
  }, 30_000);

  // The keepalives are the transport's, whatever the engine: the PostgreSQL run would wait out the same 12 s again.
  test.skipIf(onPostgres)(
    "a session idle longer than Bun's default idleTimeout (10 s) still answers",
    async () => {
      // Bun's default idleTimeout (Elysia's listen would make it 30 s): without keepalives the stream is cut.
      const s = makeServices();
      await ingestMemory(s, { content: "Idle sessions survive thanks to keepalive comments.", project: "memsvc" });
      const app = createApp(s);
      app.listen({ port: 0, hostname: "127.0.0.1", idleTimeout: 10 });
      const url = `http://127.0.0.1:${app.server!.port}`;
      try {
        const steps = [
          { label: "before", call: "memsvc_recent", args: {} },
          { sleep: 12_000 },
          { label: "after", call: "memsvc_search", args: { query: "idle sessions keepalive" } },
        ];
        const [[sse], [streamable]] = await Promise.all([drive(url, "sse", { steps }), drive(url, "http", { steps })]);
        for (const results of [sse, streamable]) {
          expect(results.map((r) => r.error ?? r.isError)).toEqual([false, false]);
          expect(results[1].text).toContain("Idle sessions survive");
          // The same session, not a silent reconnect (the SSE client's EventSource would reconnect).
          expect(results[0].session).toMatch(/^[0-9a-f-]{36}$/);
          expect(results[1].session).toBe(results[0].session!);
        }
      } finally {
        await app.stop(true);
        await s.close();
      }
    },
    30_000,
  );

  test("closeAll ends every open session (graceful shutdown)", async () => {
    const a = await openSse("127.0.0.1");
    const b = await openSse("127.0.0.1", bearer());
    expect(mcpSessionCount(srv.services).sse).toBe(2);
    await closeAll(srv.services);
    await Promise.all([a.ended, b.ended]);
    expect(mcpSessionCount(srv.services).sse).toBe(0);
    const late = await requestFrom("127.0.0.1", `${srv.url}/messages?sessionId=${a.sessionId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: initialized,
    });
    expect(late.status).toBe(404);
  });
});

describe("memsvc server process", () => {
  test("serves the tools on /sse and /mcp; SIGTERM ends open sessions and exits cleanly", async () => {
    const port = await freePort();
    const server = await startProcess([BUN, "src/main.ts", "server", "--port", String(port)], childEnv(tempHome()), port);
    try {
      const steps = [{ label: "ingest", call: "memsvc_ingest", args: { content: "The real server process answers MCP tools." } }];
      const [[sse], [streamable]] = await Promise.all([drive(server.url, "sse", { steps }), drive(server.url, "http", { steps })]);
      expect(sse[0].text).toStartWith("Stored memory ");
      expect(streamable[0].text).toStartWith("Stored memory ");
      const res = await fetch(`${server.url}/sse`);
      const reader = res.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain("event: endpoint");
      server.proc.kill("SIGTERM");
      for (let r = await reader.read(); !r.done; r = await reader.read());
      expect(await server.proc.exited).toBe(0);
      expect(server.stderr()).toMatch(/closed 1 MCP session\n[\s\S]*stopped cleanly/);
    } finally {
      server.proc.kill();
    }
  }, 30_000);
});

describe("/sse and /messages", () => {
  test("bad requests: missing or unknown session, malformed body, not JSON-RPC", async () => {
    const post = (query: string, body: string) =>
      requestFrom("127.0.0.1", `${srv.url}/messages${query}`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const missing = await post("", initialized);
    expect(missing.status).toBe(400);
    expect(missing.json().error.message).toContain("sessionId query parameter is required");
    const unknown = await post("?sessionId=00000000-0000-4000-8000-000000000000", initialized);
    expect(unknown.status).toBe(404);
    expect(unknown.json().error.message).toContain("reconnect with GET /sse");
    const open = await openSse("127.0.0.1");
    try {
      const bad = await post(`?sessionId=${open.sessionId}`, "{not json");
      expect(bad.status).toBe(400);
      expect(bad.json().error.message).toContain("malformed JSON");
      const notRpc = await post(`?sessionId=${open.sessionId}`, JSON.stringify({ hello: "world" }));
      expect(notRpc.status).toBe(400);
      expect(notRpc.json().error.message).toContain("JSON-RPC");
      expect((await post(`?sessionId=${open.sessionId}`, initialize)).status).toBe(202);
    } finally {
      open.close();
    }
  });

  test("remote callers need the token on /sse and /messages; a session id is no key", async () => {
    const refused = await openSse("127.0.0.2");
    expect(refused.status).toBe(401);
    const remote = await openSse("127.0.0.2", bearer());
    const local = await openSse("127.0.0.1");
    try {
      expect(remote.status).toBe(200);
      expect(remote.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const post = (from: string, id: string | null, headers: Record<string, string> = {}) =>
        requestFrom(from, `${srv.url}/messages?sessionId=${id}`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: initialize,
        });
      // Another remote caller, without the token, cannot use either session.
      expect((await post("127.0.0.2", remote.sessionId)).status).toBe(401);
      expect((await post("127.0.0.2", local.sessionId)).status).toBe(401);
      expect((await post("127.0.0.2", remote.sessionId, { authorization: "Bearer wrong" })).status).toBe(401);
      // A session opened with the token stays bound to it, even for a local caller.
      const forbidden = await post("127.0.0.1", remote.sessionId);
      expect(forbidden.status).toBe(403);
      expect(forbidden.json().error.message).toContain("opened with the bearer token");
      expect((await post("127.0.0.2", remote.sessionId, bearer())).status).toBe(202);
      expect((await post("127.0.0.1", local.sessionId)).status).toBe(202);
    } finally {
      remote.close();
      local.close();
    }
    expect(await until(() => mcpSessionCount(srv.services).sse === 0)).toBe(true);
  });
});

describe("/mcp (Streamable HTTP)", () => {
  test("remote callers need the token; sessions are bound; DELETE ends them; bad requests are 4xx", async () => {
    const mcp = (from: string, method: string, headers: Record<string, string>, body?: string) =>
      requestFrom(from, `${srv.url}/mcp`, { method, headers: { ...mcpHeaders, ...headers }, body });
    expect((await mcp("127.0.0.2", "POST", {}, initialize)).status).toBe(401);
    const opened = await mcp("127.0.0.2", "POST", bearer(), initialize);
    expect(opened.status).toBe(200);
    expect(opened.body).toContain('"serverInfo":{"name":"memsvc"');
    const id = String(opened.headers["mcp-session-id"]);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(mcpSessionCount(srv.services).streamable).toBe(1);

    const session = { "mcp-session-id": id };
    expect((await mcp("127.0.0.2", "POST", session, initialized)).status).toBe(401);
    const forbidden = await mcp("127.0.0.1", "POST", session, initialized);
    expect(forbidden.status).toBe(403);
    expect(forbidden.json().error.message).toContain("opened with the bearer token");
    expect((await mcp("127.0.0.2", "POST", { ...session, ...bearer() }, initialized)).status).toBe(202);
    const call = await mcp(
      "127.0.0.2",
      "POST",
      { ...session, ...bearer() },
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "memsvc_get", arguments: { id: "00000000" } } }),
    );
    expect(call.status).toBe(200);
    expect(call.body).toContain('"isError":true');
    expect(call.body).toContain("no memory with id prefix 00000000");

    expect((await mcp("127.0.0.1", "POST", {}, initialized)).status).toBe(400);
    expect((await mcp("127.0.0.1", "POST", {}, "{oops")).status).toBe(400);
    expect((await mcp("127.0.0.1", "GET", {})).status).toBe(400);
    expect((await mcp("127.0.0.2", "DELETE", { ...session, ...bearer() })).status).toBe(200);
    expect(mcpSessionCount(srv.services).streamable).toBe(0);
    const gone = await mcp("127.0.0.2", "POST", { ...session, ...bearer() }, initialized);
    expect(gone.status).toBe(404);
    expect(gone.json().error.message).toContain("send initialize again");
  });
});
