import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Implementation,
  type JSONRPCMessage,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Config } from "../config";
import { serverHeaders, serverTls } from "../server-client";
import { memoryInstructions } from "../core/identity";
import { MCP_BRIDGE_CONNECT_MS } from "./tuning";
import { VERSION } from "../version";

/**
 * `memsvc mcp`: an stdio MCP server that forwards tools/list and tools/call
 * to the running memsvc's Streamable HTTP endpoint (/mcp), so clients that
 * only launch stdio servers need no third-party bridge. The server is found
 * as every client command finds it (loadConfig: MEMSVC_URL, serverUrl,
 * <home>/server.json, config port, default), again on each connection
 * attempt, so a server started after the client still gets used.
 */
export interface BridgeOptions {
  /** Re-read on every connection attempt (server.json may appear later). */
  config: () => Config;
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  log?: (line: string) => void;
}

interface Upstream {
  client: Client;
  url: string;
}

/** Why the server cannot be reached and what to do about it: the text of a tool error and of the stderr line. */
export function notRunningText(config: Config, reason: string): string {
  return `memsvc server is not reachable at ${config.serverUrl} (address from ${config.serverUrlFrom}: ${reason}). Start it with \`memsvc server\` (\`memsvc status\` checks it; set MEMSVC_URL if it runs elsewhere), then call the tool again. Memory is unavailable until then; carry on without it.`;
}

/**
 * Passes messages through to the stdio transport but lets the bridge read the
 * first ones before the Server exists: initialize carries the client's name,
 * which the upstream session must present (it is the provenance of ingested
 * memories), and the Server's instructions come from the upstream server.
 */
class HeldTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Client requests not yet answered: stdin closing right after a request must not lose its answer. */
  open = 0;
  constructor(private readonly inner: StdioServerTransport) {}
  async start(): Promise<void> {}
  send(message: JSONRPCMessage): Promise<void> {
    if ("id" in message && ("result" in message || "error" in message)) this.open--;
    return this.inner.send(message);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

export async function runBridge(opts: BridgeOptions): Promise<void> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`memsvc mcp: ${line}\n`));
  const stdio = new StdioServerTransport(opts.stdin as never, opts.stdout as never);
  const held = new HeldTransport(stdio);
  const pending: JSONRPCMessage[] = [];
  let ready = false;
  let clientInfo: Implementation = { name: "memsvc-mcp", version: VERSION };
  let upstream: Upstream | null = null;
  let connecting: Promise<Upstream> | null = null;

  const connect = (): Promise<Upstream> => {
    connecting ??= (async () => {
      const config = opts.config();
      const headers = serverHeaders(config);
      const url = `${config.serverUrl}/mcp`;
      const client = new Client(clientInfo);
      // An https server with a self-signed certificate: the SDK's fetch gets the CA the config names.
      const tls = serverTls(config);
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers },
        ...(tls ? { fetch: (u: string | URL, init?: RequestInit) => fetch(u, { ...init, tls } as RequestInit) } : {}),
      });
      try {
        await client.connect(transport, { timeout: MCP_BRIDGE_CONNECT_MS });
      } catch (e) {
        void client.close().catch(() => {});
        throw new Error(notRunningText(config, (e as Error).message));
      }
      const version = client.getServerVersion()?.version;
      if (version && version !== VERSION)
        log(`the server at ${config.serverUrl} runs memsvc ${version}, this command is ${VERSION}; tools come from the server`);
      return (upstream = { client, url });
    })().finally(() => (connecting = null));
    return connecting;
  };
  const current = async (): Promise<Upstream> => upstream ?? connect();
  /** A dropped upstream (server restarted, session expired) is reconnected once before giving up. */
  const withUpstream = async <T>(use: (u: Upstream) => Promise<T>): Promise<T> => {
    const first = await current();
    try {
      return await use(first);
    } catch (e) {
      // The server answered with a JSON-RPC error (unknown tool, bad params): the session is fine.
      if (e instanceof McpError) throw e;
      if (upstream === first) upstream = null;
      void first.client.close().catch(() => {});
      log(`lost the server session (${(e as Error).message}); reconnecting`);
      return use(await connect());
    }
  };

  const start = async (first: JSONRPCMessage) => {
    const params = "method" in first && first.method === "initialize" ? (first.params as { clientInfo?: Implementation } | undefined) : undefined;
    if (params?.clientInfo?.name) clientInfo = { name: params.clientInfo.name, version: params.clientInfo.version ?? "0" };
    let instructions: string | undefined;
    try {
      instructions = (await connect()).client.getInstructions();
    } catch (e) {
      log((e as Error).message);
      // Same binary, same release: the text the server would have sent, unless the user turned it off.
      instructions = opts.config().memoryInstructions ? memoryInstructions() : undefined;
    }
    const server = new Server({ name: "memsvc", version: VERSION }, { capabilities: { tools: {} }, instructions });
    server.setRequestHandler(ListToolsRequestSchema, async (): Promise<{ tools: Tool[] }> => {
      try {
        return { tools: (await withUpstream((u) => u.client.listTools())).tools };
      } catch (e) {
        // The list must still load (clients drop a server whose list fails); calls then explain.
        log((e as Error).message);
        return { tools: await offlineTools() };
      }
    });
    server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
      try {
        return (await withUpstream((u) => u.client.callTool(request.params))) as CallToolResult;
      } catch (e) {
        return { isError: true, content: [{ type: "text", text: (e as Error).message }] };
      }
    });
    server.onclose = () => void upstream?.client.close().catch(() => {});
    await server.connect(held);
    ready = true;
    for (const m of pending.splice(0)) held.onmessage?.(m);
  };

  const closed = new Promise<void>((resolve) => {
    stdio.onclose = () => {
      void upstream?.client.close().catch(() => {});
      held.onclose?.();
      resolve();
    };
  });
  stdio.onerror = (e) => log(`stdin: ${e.message}`);
  stdio.onmessage = (message) => {
    if ("id" in message && "method" in message) held.open++;
    if (ready) return held.onmessage?.(message);
    pending.push(message);
    if (pending.length === 1) void start(message).catch((e) => log(`could not start: ${(e as Error).message}`));
  };
  await stdio.start();
  // The client closing our stdin is how a stdio session ends.
  const input: NodeJS.ReadableStream = opts.stdin ?? process.stdin;
  input.once("end", async () => {
    // Answer what was asked before the client hung up (bounded: a stuck upstream call does not keep us alive).
    const until = Date.now() + MCP_BRIDGE_CONNECT_MS * 2;
    while ((held.open > 0 || (pending.length > 0 && !ready)) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    void stdio.close();
  });
  await closed;
}

/**
 * The tool definitions of this release, listed while the server is down: the
 * same registerTools the server uses, on an in-process MCP Server whose tools
 * are never called (calls go upstream or return the not-running error).
 */
async function offlineTools(): Promise<Tool[]> {
  const [{ Server }, { InMemoryTransport }, { registerTools }] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/inMemory.js"),
    import("./tools"),
  ]);
  const local = new Server({ name: "memsvc", version: VERSION }, { capabilities: { tools: {} } });
  registerTools(local, {} as never);
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "memsvc-mcp", version: VERSION });
  await Promise.all([local.connect(a), client.connect(b)]);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
    await local.close();
  }
}
