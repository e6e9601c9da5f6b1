import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { memoryInstructions } from "../core/identity";
import type { Services } from "../core/services";
import { VERSION } from "../version";
import { BYPASS_PRINCIPAL, type Principal } from "../core/tokens";
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

/** One MCP server (tools registered) per session: a Server serves exactly one transport. */
export function createMcpServer(s: Services, principal: Principal = BYPASS_PRINCIPAL): Server {
  const server = new Server({ name: "memsvc", version: VERSION }, { capabilities: { tools: {} }, instructions: serverInstructions(s) });
  registerTools(server, s, principal);
  return server;
}
