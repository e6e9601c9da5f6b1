import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { memoryInstructions } from "../core/recall";
import type { Services } from "../core/services";
import { VERSION } from "../version";
import { registerTools } from "./tools";

/**
 * The initialize `instructions`: the same product-owned text as the `memory`
 * identity section (recall, citing, when to ingest), so a client that reads
 * instructions but never loads identity still learns the rules, and both
 * change together with the server. With `memoryInstructions: false` the user
 * has turned that text off; none is sent then either.
 */
export function serverInstructions(s: Pick<Services, "config">): string | undefined {
  return s.config.memoryInstructions ? memoryInstructions() : undefined;
}

/** One MCP server (tools registered) per session: an McpServer serves exactly one transport. */
export function createMcpServer(s: Services): McpServer {
  const server = new McpServer({ name: "memsvc", version: VERSION }, { capabilities: { tools: {} }, instructions: serverInstructions(s) });
  registerTools(server, s);
  return server;
}
