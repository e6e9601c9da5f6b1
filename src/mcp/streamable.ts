import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Services } from "../core/services";
import { MCP_KEEPALIVE_MS, MCP_MAX_STREAMABLE_SESSIONS, MCP_SESSION_IDLE_MS } from "./tuning";
import { invalid, notFound } from "../errors";
import { checkSessionUse, type Caller } from "./caller";
import { createMcpServer } from "./server";

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  opener: Caller;
  /** s.now() of the last request: idle sessions are closed after `idleMs`. */
  usedAt: number;
}

export interface SessionLimits {
  /** Sessions kept at most; past it the least recently used is closed. */
  max?: number;
  /** A session unused this long is closed (by `sweep`, or found so by its next request). */
  idleMs?: number;
}

/**
 * The Streamable HTTP transport at /mcp, stateful: initialize creates a
 * transport and its own MCP Server, later requests find it by Mcp-Session-Id.
 */
export class StreamableSessions {
  /** In least-recently-used order: a client may vanish without DELETE, so the oldest are dropped past the cap. */
  private readonly sessions = new Map<string, Session>();
  private readonly max: number;
  private readonly idleMs: number;

  constructor(
    private readonly s: Services,
    limits: SessionLimits = {},
  ) {
    this.max = limits.max ?? MCP_MAX_STREAMABLE_SESSIONS;
    this.idleMs = limits.idleMs ?? MCP_SESSION_IDLE_MS;
  }

  get size(): number {
    return this.sessions.size;
  }

  async handle(request: Request, caller: Caller): Promise<Response> {
    const id = request.headers.get("mcp-session-id");
    if (id) {
      let session = this.sessions.get(id);
      if (session && this.s.now() - session.usedAt > this.idleMs) {
        this.drop(id, session);
        session = undefined;
      }
      if (!session)
        throw notFound(
          `no open MCP session ${id.slice(0, 64)}; it ended, expired after ${this.idleMs / 60_000} idle minutes, or never existed: send initialize again without Mcp-Session-Id`,
        );
      checkSessionUse(session.opener, caller, id);
      session.usedAt = this.s.now();
      this.sessions.delete(id);
      this.sessions.set(id, session);
      return session.transport.handleRequest(request);
    }
    if (request.method !== "POST") throw invalid(`${request.method} /mcp needs the Mcp-Session-Id header of an initialized session`);
    let body: unknown;
    try {
      body = JSON.parse(await request.text());
    } catch {
      throw invalid("malformed JSON body: send a JSON-RPC initialize request");
    }
    const messages = Array.isArray(body) ? body : [body];
    if (!messages.some(isInitializeRequest)) throw invalid("no Mcp-Session-Id header: the first request of a session must be initialize");
    return this.open(request, body, caller);
  }

  private async open(request: Request, body: unknown, caller: Caller): Promise<Response> {
    const server = createMcpServer(this.s, caller.principal);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      keepAliveMs: MCP_KEEPALIVE_MS,
      onsessioninitialized: (id) => {
        this.sessions.set(id, { transport, server, opener: caller, usedAt: this.s.now() });
        if (this.sessions.size > this.max) {
          const [oldest, dropped] = this.sessions.entries().next().value!;
          this.drop(oldest, dropped);
        }
      },
      onsessionclosed: (id) => void this.sessions.delete(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  }

  /** Closes every session idle longer than `idleMs`; returns how many. Map order is least recently used first. */
  sweep(): number {
    const now = this.s.now();
    let n = 0;
    for (const [id, session] of this.sessions) {
      if (now - session.usedAt <= this.idleMs) break;
      this.drop(id, session);
      n++;
    }
    return n;
  }

  private drop(id: string, session: Session): void {
    this.sessions.delete(id);
    void session.server.close();
  }

  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map((x) => x.server.close()));
  }
}
