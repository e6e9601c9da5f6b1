import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ingestMemory } from "../../src/core/ingest";
import { hugeString, INVALID_UTF8, MALFORMED_JSON, NASTY_STRINGS, NOT_STRINGS, rng, snapshot, TRAVERSAL } from "../helpers/fuzz";
import { Fuzzer } from "../helpers/fuzz-run";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { drive, type DriverStep } from "../helpers/mcp";
import { startServer, type TestServer } from "../helpers/server";

const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
const r = rng(SEED);
let srv: TestServer;
let fuzz: Fuzzer;
const ids: string[] = [];

beforeAll(async () => {
  srv = await startServer();
  for (let i = 0; i < 4; i++)
    ids.push((await ingestMemory(srv.services, { content: `MCP fuzz seed ${i}: lighthouse ${i} keeps its lamp lit during fog.`, project: "mcp-fuzz" })).id!);
  mkdirSync(srv.services.config.paths.identity, { recursive: true });
  writeFileSync(join(srv.services.config.paths.identity, "soul.md"), "I am the MCP fuzz agent.\n");
  fuzz = new Fuzzer(srv);
});

afterAll(async () => {
  const total = fuzz.save(`fuzz-mcp-${SEED}`);
  console.log(`MCP fuzz (seed ${SEED}): ${total.requests} transport requests; counts in test-artifacts/fuzz-mcp-${SEED}.json`);
  await srv.stop();
});

const enc = new TextEncoder();
const JSON_CT = { "content-type": "application/json" };
const MCP_HEADERS = { ...JSON_CT, accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };
const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } },
});

/** Garbage a transport must refuse: not JSON, not UTF-8, not JSON-RPC. */
function garbage(): { label: string; body: string | Uint8Array<ArrayBuffer> }[] {
  return [
    ...MALFORMED_JSON.map((m) => ({ label: `malformed ${JSON.stringify(m.slice(0, 16))}`, body: m })),
    ...INVALID_UTF8.map((b) => ({
      label: `invalid UTF-8 ${b}`,
      body: new Uint8Array([...enc.encode('{"jsonrpc":"2.0","id":1,"method":"'), ...b, ...enc.encode('"}')]),
    })),
    ...[{}, [], 1, "x", null, { jsonrpc: "1.0", id: 1, method: "x" }, { jsonrpc: "2.0" }, { jsonrpc: "2.0", id: {}, method: 5 }].map((v) => ({
      label: `not JSON-RPC ${JSON.stringify(v)}`,
      body: JSON.stringify(v),
    })),
    { label: "2 MB junk", body: JSON.stringify({ junk: hugeString(r, 2, 2) }) },
  ];
}

async function finish(): Promise<void> {
  const problems = fuzz.problems.splice(0);
  expect(await fuzz.healthy()).toBe(true);
  expect(problems).toEqual([]);
}

/** GET /sse, read up to the endpoint event, keep the stream open. */
async function openSse(): Promise<{ sessionId: string; close(): void }> {
  const ctl = new AbortController();
  const res = await fetch(`${srv.url}/sse`, { headers: { accept: "text/event-stream" }, signal: ctl.signal });
  const reader = res.body!.getReader();
  let text = "";
  while (!/sessionId=([0-9a-f-]+)/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
  return { sessionId: /sessionId=([0-9a-f-]+)/.exec(text)![1], close: () => ctl.abort() };
}

describe("MCP transports", () => {
  test("POST /messages: no, unknown or hostile session ids, then garbage into a live session; the session still answers", async () => {
    const post = (endpoint: string, label: string, query: string, body: string | Uint8Array<ArrayBuffer>) =>
      fuzz.send({ endpoint, label, method: "POST", path: `/messages${query}`, headers: JSON_CT, body, expect: "reject" });
    await post("POST /messages", "no sessionId", "", initialize);
    for (const id of [...TRAVERSAL.slice(0, 10), "00000000-0000-4000-8000-000000000000", "x".repeat(5000), ""])
      await post("POST /messages", `sessionId ${JSON.stringify(id.slice(0, 20))}`, `?sessionId=${encodeURIComponent(id)}`, initialize);
    const live = await openSse();
    try {
      for (const g of garbage()) await post("POST /messages (live session)", g.label, `?sessionId=${live.sessionId}`, g.body);
      const ok = await fetch(`${srv.url}/messages?sessionId=${live.sessionId}`, { method: "POST", headers: JSON_CT, body: initialize });
      fuzz.record("POST /messages (live session)", ok.status);
      expect(ok.status).toBe(202);
    } finally {
      live.close();
    }
    await finish();
  });

  test("/mcp: garbage without a session, unknown session ids, wrong methods and headers, garbage into a live session", async () => {
    const send = (endpoint: string, label: string, method: string, headers: Record<string, string>, body?: string | Uint8Array<ArrayBuffer>) =>
      fuzz.send({ endpoint, label, method, path: "/mcp", headers, body, expect: "reject" });
    for (const g of garbage()) await send("POST /mcp", g.label, "POST", MCP_HEADERS, g.body);
    await send("POST /mcp", "a call before initialize", "POST", MCP_HEADERS, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
    for (const id of [...TRAVERSAL.slice(0, 6), "00000000-0000-4000-8000-000000000000"]) {
      for (const method of ["GET", "POST", "DELETE"])
        await send(
          `${method} /mcp`,
          `unknown session ${JSON.stringify(id.slice(0, 20))}`,
          method,
          { ...MCP_HEADERS, "mcp-session-id": id },
          method === "POST" ? initialize : undefined,
        );
    }
    await send("GET /mcp", "no session", "GET", { accept: "text/event-stream" });
    await send("DELETE /mcp", "no session", "DELETE", {});

    const opened = await fetch(`${srv.url}/mcp`, { method: "POST", headers: MCP_HEADERS, body: initialize });
    expect(opened.status).toBe(200);
    await opened.text();
    const session = { ...MCP_HEADERS, "mcp-session-id": opened.headers.get("mcp-session-id")! };
    await fuzz.resync();
    for (const g of garbage()) {
      const res = await fetch(`${srv.url}/mcp`, { method: "POST", headers: session, body: g.body });
      // The SDK's transport answers JSON-RPC errors: {jsonrpc, error: {code: <number>, message}, id}. It takes an empty batch as "nothing to do" (202).
      await fuzz.judge({ endpoint: "POST /mcp (live session)", label: g.label, expect: g.body === "[]" ? "any" : "reject" }, res.status, await res.text(), {
        jsonRpc: true,
      });
    }
    for (const [label, headers] of [
      ["text/plain body", { ...session, "content-type": "text/plain" }],
      ["no Accept", { ...session, accept: "" }],
      ["Accept: text/html", { ...session, accept: "text/html" }],
    ] as const) {
      const res = await fetch(`${srv.url}/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }) });
      await fuzz.judge({ endpoint: "POST /mcp (live session)", label, expect: "reject" }, res.status, await res.text(), { jsonRpc: true });
    }
    const list = await fetch(`${srv.url}/mcp`, { method: "POST", headers: session, body: JSON.stringify({ jsonrpc: "2.0", id: 10, method: "tools/list" }) });
    expect(list.status).toBe(200);
    expect(await list.text()).toContain("memsvc_search");
    await fetch(`${srv.url}/mcp`, { method: "DELETE", headers: session });
    await finish();
  });
});

/** Calls that are wrong: each must come back as an isError result, never as a protocol failure or a crash. */
function badCalls(): DriverStep[] {
  const id = ids[0];
  const calls: [string, Record<string, unknown>][] = [];
  const str = (tool: string, field: string, base: Record<string, unknown> = {}) => {
    for (const v of r.some(NOT_STRINGS, 5)) calls.push([tool, { ...base, [field]: v }]);
    calls.push([tool, { ...base, [field]: null }]);
  };
  const num = (tool: string, field: string, base: Record<string, unknown> = {}) => {
    for (const v of ["5", -1, 0, 2.5, 1e9, [], {}, true, null]) calls.push([tool, { ...base, [field]: v }]);
  };
  for (const t of ["memsvc_search", "memsvc_get", "memsvc_ingest", "memsvc_update", "memsvc_delete", "memsvc_graph"]) calls.push([t, {}]);
  str("memsvc_search", "query");
  num("memsvc_search", "limit", { query: "lighthouse" });
  str("memsvc_search", "project", { query: "lighthouse" });
  calls.push(["memsvc_search", { query: "" }], ["memsvc_search", { query: "   " }], ["memsvc_search", { query: "x", extra: 1 }]);
  str("memsvc_get", "id");
  for (const v of [...TRAVERSAL, "", "zzzzzzzz", "0000000", "00000000", "x".repeat(5000)]) calls.push(["memsvc_get", { id: v }]);
  num("memsvc_recent", "limit");
  str("memsvc_recent", "project");
  str("memsvc_ingest", "content");
  calls.push(
    ["memsvc_ingest", { content: "" }],
    ["memsvc_ingest", { content: "\u0000 \t" }],
    ["memsvc_ingest", { content: "ok", memory_type: "bogus" }],
    ["memsvc_ingest", { content: "ok", memory_type: "../x" }],
    ["memsvc_ingest", { content: "ok", memory_type: "__proto__" }],
    ["memsvc_ingest", { content: "ok", memory_type: "constructor" }],
    ["memsvc_ingest", { content: "ok", extra: true }],
  );
  str("memsvc_ingest", "project", { content: "a memory with a bad project" });
  for (const t of ["memsvc_learnings", "memsvc_lessons"]) {
    num(t, "days");
    calls.push([t, { days: 100_000 }]);
    str(t, "project");
  }
  for (const v of [...TRAVERSAL, "Soul", "x".repeat(65), "a b", "nonexistent-section"]) calls.push(["memsvc_identity", { name: v }]);
  str("memsvc_identity", "name");
  calls.push(["memsvc_index", { extra: 1 }]);
  for (const op of [5, "explode", "NEIGHBORS", "../", null]) calls.push(["memsvc_graph", { operation: op }]);
  calls.push(
    ["memsvc_graph", { operation: "neighbors" }],
    ["memsvc_graph", { operation: "path", id }],
    ["memsvc_graph", { operation: "hubs", id }],
    ["memsvc_graph", { operation: "neighbors", id: "../../x" }],
    ["memsvc_graph", { operation: "path", id, target_id: "ffffffff" }],
  );
  num("memsvc_graph", "limit", { operation: "hubs" });
  calls.push(
    ["memsvc_update", { id }],
    ["memsvc_update", { id, content: "" }],
    ["memsvc_update", { id, memory_type: "bogus" }],
    ["memsvc_update", { id, memory_type: "__proto__" }],
    ["memsvc_update", { id: "../..", content: "x" }],
  );
  str("memsvc_update", "content", { id });
  for (const v of [...TRAVERSAL.slice(0, 8), "ffffffff", 7, null]) calls.push(["memsvc_delete", { id: v }]);
  calls.push(["memsvc_nonexistent", {}], ["memsvc_delete", { id: "0" }]);
  return calls.map(([call, args], i) => ({ label: `bad-${i}`, call, args }));
}

/** Odd but legal arguments: any answer is fine as long as it is an answer. */
function oddCalls(): DriverStep[] {
  const steps: DriverStep[] = [];
  for (const v of r.some(NASTY_STRINGS, 10))
    steps.push({ call: "memsvc_search", args: { query: v } }, { call: "memsvc_recent", args: { project: v.slice(0, 200) } });
  steps.push({ call: "memsvc_identity", args: { name: "memory" } }, { call: "memsvc_graph", args: { operation: "hubs", domain: "../../etc" } });
  return steps.map((s, i) => ({ ...s, label: `odd-${i}` }));
}

describe("MCP tools with malformed arguments (the SDK's own client)", () => {
  for (const kind of ["sse", "http"] as const) {
    test(`${kind}: every tool refuses bad arguments with isError and changes nothing; odd arguments get answers; the session survives`, async () => {
      const before = await snapshot(srv.services);
      const bad = badCalls();
      const [results] = await drive(srv.url, kind, { steps: [...bad, { label: "after", call: "memsvc_index" }] }, 60_000);
      const problems: string[] = [];
      const session = results[0]?.session;
      for (const res of results) {
        const step = bad.find((b) => b.label === res.label) as { call: string; args: unknown } | undefined;
        const what = step ? `${step.call} ${JSON.stringify(step.args).slice(0, 80)}` : res.label;
        if (res.error) problems.push(`${what}: protocol failure ${res.error}`);
        else if (res.label !== "after" && res.isError !== true) problems.push(`${what}: accepted: ${res.text?.slice(0, 120)}`);
        if (/internal error/.test(res.text ?? "")) problems.push(`${what}: internal error ${res.text}`);
        if (res.session !== session) problems.push(`${what}: the session changed (reconnect?)`);
      }
      const after = results.find((x) => x.label === "after");
      expect(after?.isError).toBe(false);
      expect(problems).toEqual([]);
      expect(await snapshot(srv.services)).toEqual(before);
      fuzz.record(`MCP ${kind} tools (malformed)`, "isError", bad.length);

      const odd = oddCalls();
      const [oddResults] = await drive(srv.url, kind, { steps: [...odd, { label: "after", call: "memsvc_index" }] }, 60_000);
      expect(oddResults.filter((x) => x.error || /internal error/.test(x.text ?? "")).map((x) => `${x.label}: ${x.error ?? x.text}`)).toEqual([]);
      expect(oddResults.at(-1)?.isError).toBe(false);
      fuzz.record(`MCP ${kind} tools (odd)`, "answered", odd.length);
      expect(await fuzz.healthy()).toBe(true);
    }, 90_000);
  }
});

describe("MCP tools with huge arguments (the SDK's client in this process: plans for the driver travel on its command line)", () => {
  for (const kind of ["sse", "http"] as const) {
    test(`${kind}: multi-megabyte arguments are refused or answered, never a crash`, async () => {
      const client = new Client({ name: "fuzz-huge", version: "1" });
      await client.connect(kind === "sse" ? new SSEClientTransport(new URL(`${srv.url}/sse`)) : new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`)));
      try {
        const before = await snapshot(srv.services);
        const refused: [string, Record<string, unknown>][] = [
          ["memsvc_ingest", { content: hugeString(r, 1, 3) }],
          ["memsvc_get", { id: hugeString(r, 1, 1) }],
          ["memsvc_update", { id: ids[1], content: hugeString(r, 1, 2) }],
          ["memsvc_identity", { name: hugeString(r, 1, 1) }],
          ["memsvc_graph", { operation: "neighbors", id: hugeString(r, 1, 1) }],
          ["memsvc_delete", { id: hugeString(r, 1, 1) }],
        ];
        for (const [name, args] of refused) {
          const res = await client.callTool({ name, arguments: args });
          expect({ name, isError: res.isError }).toEqual({ name, isError: true });
          expect(JSON.stringify(res.content)).not.toContain("internal error");
        }
        expect(await snapshot(srv.services)).toEqual(before);
        const search = await client.callTool({ name: "memsvc_search", arguments: { query: hugeString(r, 2, 2) } });
        expect(JSON.stringify(search.content)).not.toContain("internal error");
        expect((await client.callTool({ name: "memsvc_index", arguments: {} })).isError).toBeFalsy();
        fuzz.record(`MCP ${kind} tools (huge)`, "answered", refused.length + 1);
      } finally {
        await client.close();
      }
    }, 60_000);
  }
});
