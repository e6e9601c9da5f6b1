import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { memoryInstructions } from "../../src/core/identity";
import { closeAll, TOOL_NAMES } from "../../src/mcp";
import { writeRuntimeFile } from "../../src/runtime-file";
import { VERSION } from "../../src/version";
import { BUN, childEnv, freePort, ROOT, tempHome } from "../helpers/process";
import { startServer, type TestServer } from "../helpers/server";
import { dbRow } from "../helpers/engine";

// `memsvc mcp` is driven as a client launches it: the MCP SDK's stdio client spawns the real
// command, which finds the server through <home>/server.json like every other client command.
let srv: TestServer;
const clients: Client[] = [];

beforeAll(async () => {
  srv = await startServer();
  writeRuntimeFile(srv.services.config.paths.home, {
    pid: process.pid,
    host: "127.0.0.1",
    port: srv.port,
    version: VERSION,
    started_at: new Date().toISOString(),
  });
});
afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await srv.stop();
});

async function stdioClient(env: Record<string, string>, name = "codex-mcp-client"): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: BUN, args: [join(ROOT, "src/main.ts"), "mcp"], env, cwd: ROOT, stderr: "pipe" });
  let err = "";
  transport.stderr?.on("data", (d) => (err += String(d)));
  const client = new Client({ name, version: "1.0.0" });
  clients.push(client);
  await client.connect(transport);
  return { client, stderr: () => err };
}

const textOf = (r: unknown) => ((r as { content: unknown }).content as { type: string; text: string }[]).map((c) => c.text).join("\n");

describe("memsvc mcp (stdio bridge)", () => {
  test("lists the server's tools, passes on its instructions, forwards ingest and search", async () => {
    const { client, stderr } = await stdioClient(childEnv(srv.services.config.paths.home));
    expect(client.getServerVersion()?.name).toBe("memsvc");
    expect(client.getInstructions()).toBe(memoryInstructions());

    const tools = (await client.listTools()).tools;
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    expect(tools.find((t) => t.name === "memsvc_search")?.inputSchema.required).toContain("query");

    const ingested = await client.callTool({
      name: "memsvc_ingest",
      arguments: {
        content: "The orders table is backfilled by scripts/backfill-orders.ts before each release.",
        project: "shop-api",
        memory_type: "knowledge",
      },
    });
    expect(ingested.isError).toBeFalsy();
    const id = /\b([0-9a-f]{8})\b/.exec(textOf(ingested))?.[1];
    expect(id).toBeDefined();

    // The memory reached the server's database, with the stdio client's name as its provenance.
    const stored = await dbRow<{ source_agent: string }>(srv.services, "SELECT source_agent FROM memories WHERE id LIKE ?", [`${id}%`]);
    expect(stored?.source_agent).toBe("codex-mcp-client");

    const found = await client.callTool({ name: "memsvc_search", arguments: { query: "orders table backfill", project: "shop-api" } });
    expect(found.isError).toBeFalsy();
    expect(textOf(found)).toContain("backfill-orders.ts");
    expect(textOf(found)).toContain(id!);
    // Its receipt names the bridge's session with the server (the bridge forwards over Streamable HTTP).
    const [receipt] = (await (await fetch(`${srv.url}/recall/receipts?kind=search&limit=1`)).json()).receipts;
    expect(receipt).toMatchObject({ via: "mcp", prompt: "orders table backfill", session_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });

    // A tool error of the server comes back as a tool error, not a transport failure.
    const bad = await client.callTool({ name: "memsvc_get", arguments: { id: "ffffffff" } });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/ffffffff/);

    // The server ends every MCP session (as on restart or idle expiry): the next call reconnects once.
    await closeAll(srv.services);
    const again = await client.callTool({ name: "memsvc_search", arguments: { query: "orders table backfill", project: "shop-api" } });
    expect(again.isError).toBeFalsy();
    expect(textOf(again)).toContain(id!);
    expect(stderr()).toContain("reconnecting");
  }, 60_000);

  test("no server running: tools still listed, a call is an isError explaining how to start it", async () => {
    const home = tempHome();
    const idle = await freePort();
    writeFileSync(join(home, "config.json"), JSON.stringify({ port: idle }));
    const { client, stderr } = await stdioClient(childEnv(home));
    expect(client.getInstructions()).toBe(memoryInstructions());
    const tools = (await client.listTools()).tools;
    expect(tools.map((t) => t.name)).toContain("memsvc_search");

    const r = await client.callTool({ name: "memsvc_search", arguments: { query: "anything" } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain(`memsvc server is not reachable at http://127.0.0.1:${idle} (address from config port`);
    expect(textOf(r)).toContain("memsvc server");
    expect(stderr()).toContain("not reachable");
  }, 60_000);

  test("a client that writes its requests and closes stdin still gets every answer", async () => {
    const home = tempHome();
    writeFileSync(join(home, "config.json"), JSON.stringify({ port: await freePort() }));
    const lines = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "one-shot", version: "1" } },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "memsvc_recent", arguments: {} } },
    ];
    const p = Bun.spawn([BUN, join(ROOT, "src/main.ts"), "mcp"], {
      cwd: ROOT,
      env: childEnv(home),
      stdin: new Blob([`${lines.map((l) => JSON.stringify(l)).join("\n")}\n`]),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [code, out] = await Promise.all([p.exited, new Response(p.stdout).text()]);
    expect(code).toBe(0);
    const replies = out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(replies.map((r) => r.id)).toEqual([1, 2]);
    expect(replies[0].result.instructions).toBe(memoryInstructions());
    expect(replies[1].result.isError).toBe(true);
    expect(replies[1].result.content[0].text).toContain("memsvc server is not reachable");
  }, 60_000);

  test("memoryInstructions: false in config.json: no instructions, from the server or the bridge", async () => {
    const home = tempHome();
    writeFileSync(join(home, "config.json"), JSON.stringify({ port: await freePort(), memoryInstructions: false }));
    const { client } = await stdioClient(childEnv(home));
    expect(client.getInstructions()).toBeUndefined();
  }, 60_000);
});

describe("initialize instructions", () => {
  test("/mcp and /sse send the memory section's text", async () => {
    const headers = { authorization: `Bearer ${srv.token}` };
    for (const transport of [
      new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers } }),
      new SSEClientTransport(new URL(`${srv.url}/sse`), { requestInit: { headers } }),
    ]) {
      const client = new Client({ name: "instructions-check", version: "1.0.0" });
      clients.push(client);
      await client.connect(transport);
      const text = client.getInstructions();
      expect(text).toBe(memoryInstructions());
      expect(text).toContain(`memsvc ${VERSION}`);
      expect(text).toContain("(memory <short_id>, <date>, from <source_agent>)");
      expect(text).toContain("memsvc_ingest");
      await client.close();
    }
  }, 30_000);
});
