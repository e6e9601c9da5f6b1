/**
 * MCP transports: keep-alives, session caps and idle time, the stdio bridge.
 */

/** MCP event streams (/sse, /mcp) send a comment this often: Bun.serve closes a connection idle for idleTimeout (10 s by default, 60 s in memsvc server), which would end the session. */
export const MCP_KEEPALIVE_MS = 5_000;

/** Open /mcp (Streamable HTTP) sessions kept at most; a client may vanish without DELETE, so past this the least recently used is closed. */
export const MCP_MAX_STREAMABLE_SESSIONS = 1000;

/**
 * Open /sse sessions kept at most; past this the least recently used is closed. Each holds its own
 * McpServer (~330 KB), so 256 bound SSE at ~85 MB; a legitimate client rarely holds more than a few.
 * See docs/decisions/mcp-sessions.md.
 */
export const MCP_MAX_SSE_SESSIONS = 256;

/**
 * An /mcp session unused this long is closed (clients may vanish without DELETE); its next request
 * gets 404 and the client initializes again. 30 minutes outlasts a long tool-free stretch of a turn.
 * See docs/decisions/mcp-sessions.md.
 */
export const MCP_SESSION_IDLE_MS = 30 * 60_000;

/** How often idle /mcp sessions are looked for; requests also check their own session's age. */
export const MCP_SESSION_SWEEP_MS = 60_000;

/**
 * `memsvc mcp` waits this long for the local server's initialize answer before telling the client
 * memory is unavailable: a client waits about 10 s for a stdio server, so answer well inside it.
 */
export const MCP_BRIDGE_CONNECT_MS = 4_000;
