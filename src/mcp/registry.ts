import type { Services } from "../core/services";
import type { SseSessions } from "./sse";
import type { StreamableSessions } from "./streamable";

/**
 * The open MCP sessions of each Services, with no runtime import of the MCP
 * SDK: the server's shutdown reads it, and the SDK (with zod and ajv, ~240
 * modules, ~240 ms of a start from source) loads only when the first MCP
 * request arrives (http/routes/mcp.ts).
 */
export interface McpSessions {
  sse: SseSessions;
  streamable: StreamableSessions;
  sweeper: ReturnType<typeof setInterval>;
  /** Ends every session (SSE streams close, /mcp sessions end): the server's shutdown. */
  close(): Promise<void>;
}

/** Its entry in Services.state.edges: per server, not per process. */
const EDGE = "mcp";

/** This server's MCP sessions, if any MCP request opened them. */
export function registered(s: Services): McpSessions | undefined {
  return s.state.root.state.edges.get(EDGE) as McpSessions | undefined;
}

export function register(s: Services, sessions: Omit<McpSessions, "close">): McpSessions {
  const root = s.state.root;
  const entry: McpSessions = {
    ...sessions,
    async close() {
      clearInterval(entry.sweeper);
      const open = entry.sse.size + entry.streamable.size;
      await Promise.all([entry.sse.closeAll(), entry.streamable.closeAll()]);
      if (open > 0) root.log("info", `closed ${open} MCP session${open === 1 ? "" : "s"}`);
    },
  };
  root.state.edges.set(EDGE, entry);
  return entry;
}

/** Graceful shutdown: ends every MCP session (SSE streams close, /mcp sessions end). */
export async function closeAll(s: Services): Promise<void> {
  await registered(s)?.close();
}

/** Open sessions by transport (tests and diagnostics). */
export function mcpSessionCount(s: Services): { sse: number; streamable: number } {
  const found = registered(s);
  return { sse: found?.sse.size ?? 0, streamable: found?.streamable.size ?? 0 };
}
