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
}

// One set of sessions per Services: the HTTP routes open them, shutdown closes them.
export const registry = new WeakMap<Services, McpSessions>();

/** Graceful shutdown: ends every MCP session (SSE streams close, /mcp sessions end). */
export async function closeAll(s: Services): Promise<void> {
  const found = registry.get(s);
  if (!found) return;
  clearInterval(found.sweeper);
  const open = found.sse.size + found.streamable.size;
  await Promise.all([found.sse.closeAll(), found.streamable.closeAll()]);
  if (open > 0) s.log("info", `closed ${open} MCP session${open === 1 ? "" : "s"}`);
}

/** Open sessions by transport (tests and diagnostics). */
export function mcpSessionCount(s: Services): { sse: number; streamable: number } {
  const found = registry.get(s);
  return { sse: found?.sse.size ?? 0, streamable: found?.streamable.size ?? 0 };
}
