import type { Services } from "../core/services";
import { MCP_SESSION_SWEEP_MS } from "./tuning";
import { SseSessions } from "./sse";
import { StreamableSessions } from "./streamable";
import { register, registered, type McpSessions } from "./registry";

export type { Caller } from "./caller";
export { SseSessions } from "./sse";
export { StreamableSessions } from "./streamable";
export { TOOL_NAMES } from "./tools";

export { closeAll, mcpSessionCount, type McpSessions } from "./registry";

export function mcpSessions(s: Services): McpSessions {
  let found = registered(s);
  if (!found) {
    const streamable = new StreamableSessions(s);
    const sweeper = setInterval(() => {
      const n = streamable.sweep();
      if (n > 0) s.log("info", `closed ${n} idle MCP session${n === 1 ? "" : "s"}`);
    }, MCP_SESSION_SWEEP_MS);
    sweeper.unref();
    found = register(s, { sse: new SseSessions(s), streamable, sweeper });
  }
  return found;
}
