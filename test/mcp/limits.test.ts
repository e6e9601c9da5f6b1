import { afterEach, describe, expect, test } from "bun:test";
import { MCP_MAX_SSE_SESSIONS, MCP_SESSION_IDLE_MS } from "../../src/mcp/tuning";
import { AppError } from "../../src/errors";
import { BYPASS_PRINCIPAL } from "../../src/core/tokens";
import { SseSessions, StreamableSessions, type Caller } from "../../src/mcp";
import { makeServices, type TestServices } from "../helpers/services";

/**
 * Session caps and idle expiry of both MCP transports, on the real session
 * classes (the routes only hand them the request). Small caps and a clock the
 * test moves keep this fast; the defaults are checked to be the documented ones.
 */

const caller: Caller = { viaToken: false, loopback: true, principal: BYPASS_PRINCIPAL };
const open: TestServices[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

function services(clock?: { t: number }): TestServices {
  const s = makeServices(clock ? { now: () => clock.t } : {});
  open.push(s);
  return s;
}

async function caught(work: Promise<unknown>): Promise<AppError> {
  try {
    await work;
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error("expected an AppError");
}

/** Reads an SSE response up to its endpoint event; `ended` resolves when the server closes the stream. */
async function endpointOf(res: Response): Promise<{ id: string; ended: Promise<void> }> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = "";
  while (!/sessionId=([0-9a-f-]+)/.test(text)) text += dec.decode((await reader.read()).value);
  const ended = (async () => {
    for (;;) if ((await reader.read()).done) return;
  })();
  return { id: /sessionId=([0-9a-f-]+)/.exec(text)![1], ended };
}

const ping = (n: number) => JSON.stringify({ jsonrpc: "2.0", id: n, method: "ping" });

describe("/sse session cap", () => {
  test("past the cap the least recently used session is closed: its stream ends, its next POST is 404", async () => {
    expect(MCP_MAX_SSE_SESSIONS).toBe(256);
    const s = services();
    const sse = new SseSessions(s, 3);
    const a = await endpointOf(await sse.open(caller, "/messages"));
    const b = await endpointOf(await sse.open(caller, "/messages"));
    const c = await endpointOf(await sse.open(caller, "/messages"));
    // a is used after b and c were opened, so b becomes the least recently used.
    expect((await sse.post(a.id, caller, ping(1), new Headers())).status).toBe(202);
    const d = await endpointOf(await sse.open(caller, "/messages"));
    expect(sse.size).toBe(3);
    await b.ended; // the evicted client sees its stream end
    const e = await caught(sse.post(b.id, caller, ping(2), new Headers()));
    expect(e.code).toBe("not_found");
    expect(e.message).toContain("reconnect with GET /sse");
    for (const live of [a, c, d]) expect((await sse.post(live.id, caller, ping(3), new Headers())).status).toBe(202);
    await sse.closeAll();
  });
});

describe("/mcp sessions", () => {
  const initialize = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  });
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };
  const post = (m: StreamableSessions, body: string, id?: string) =>
    m.handle(new Request("http://127.0.0.1/mcp", { method: "POST", headers: id ? { ...headers, "mcp-session-id": id } : headers, body }), caller);

  async function init(m: StreamableSessions): Promise<string> {
    const res = await post(m, initialize);
    expect(res.status).toBe(200);
    await res.text();
    return res.headers.get("mcp-session-id")!;
  }

  test("an idle session expires after the idle time: swept, and its next request is 404 'initialize again'", async () => {
    expect(MCP_SESSION_IDLE_MS).toBe(30 * 60_000);
    const clock = { t: 1_000_000 };
    const m = new StreamableSessions(services(clock), { idleMs: 60_000 });
    const idle = await init(m);
    const busy = await init(m);
    clock.t += 45_000;
    expect((await post(m, ping(2), busy)).status).toBe(200); // used: its idle time starts over
    clock.t += 45_000; // idle: 90 s unused; busy: 45 s
    expect(m.sweep()).toBe(1);
    expect(m.size).toBe(1);
    const gone = await caught(post(m, ping(3), idle));
    expect(gone.code).toBe("not_found");
    expect(gone.message).toContain("send initialize again");
    expect((await post(m, ping(4), busy)).status).toBe(200);
    await m.closeAll();
  });

  test("a request on an expired session is refused even before the sweep runs", async () => {
    const clock = { t: 5_000 };
    const m = new StreamableSessions(services(clock), { idleMs: 60_000 });
    const id = await init(m);
    clock.t += 60_001;
    expect((await caught(post(m, ping(2), id))).code).toBe("not_found");
    expect(m.size).toBe(0);
  });

  test("past the cap the least recently used session is closed", async () => {
    const m = new StreamableSessions(services(), { max: 2 });
    const a = await init(m);
    const b = await init(m);
    expect((await post(m, ping(2), a)).status).toBe(200);
    const c = await init(m);
    expect(m.size).toBe(2);
    expect((await caught(post(m, ping(3), b))).code).toBe("not_found");
    expect((await post(m, ping(4), a)).status).toBe(200);
    expect((await post(m, ping(5), c)).status).toBe(200);
    await m.closeAll();
  });
});
