import type { Services } from "../core/services";
import { MCP_SESSION_SWEEP_MS } from "../core/tuning";
import { SseSessions } from "./sse";
import { StreamableSessions } from "./streamable";

export type { Caller } from "./caller";
export { createMcpServer } from "./server";
export { SseSessions, SseTransport } from "./sse";
export { StreamableSessions } from "./streamable";
export { TOOL_NAMES } from "./tools";

export interface McpSessions {
  sse: SseSessions;
  streamable: StreamableSessions;
  sweeper: ReturnType<typeof setInterval>;
}

// One set of sessions per Services: the HTTP routes open them, shutdown closes them.
const registry = new WeakMap<Services, McpSessions>();

export function mcpSessions(s: Services): McpSessions {
  let found = registry.get(s);
  if (!found) {
    const streamable = new StreamableSessions(s);
    const sweeper = setInterval(() => {
      const n = streamable.sweep();
      if (n > 0) s.log("info", `closed ${n} idle MCP session${n === 1 ? "" : "s"}`);
    }, MCP_SESSION_SWEEP_MS);
    sweeper.unref();
    registry.set(s, (found = { sse: new SseSessions(s), streamable, sweeper }));
  }
  return found;
}

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
