import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Services } from "../core/services";
import { VERSION } from "../version";
import { registerTools } from "./tools";

const INSTRUCTIONS = `memsvc is your long-term memory across sessions.
- Before work on a topic, memsvc_search it (or memsvc_recent for a project overview, memsvc_learnings for lessons).
- memsvc_get loads a memory in full and marks it used; call it for memories you rely on.
- Cite a memory you rely on as (memory <short_id>, <date>, from <source_agent>).
- memsvc_ingest stores something that must be remembered; memsvc_update corrects, memsvc_delete removes.`;

/** One MCP server (tools registered) per session: an McpServer serves exactly one transport. */
export function createMcpServer(s: Services): McpServer {
  const server = new McpServer({ name: "memsvc", version: VERSION }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  registerTools(server, s);
  return server;
}
