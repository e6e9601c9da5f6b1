import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage, type MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";
import type { Services } from "../core/services";
import { MCP_KEEPALIVE_MS, MCP_MAX_SSE_SESSIONS } from "./tuning";
import { AppError, invalid, notFound } from "../errors";
import { checkSessionUse, type Caller } from "./caller";
import { createMcpServer } from "./server";

/**
 * The legacy MCP HTTP+SSE transport on web Request/Response (the SDK's own
 * SSEServerTransport needs Node's req/res). GET /sse opens an event stream
 * whose first event names the endpoint to POST messages to; replies travel
 * back on the stream.
 */
export class SseTransport implements Transport {
  readonly sessionId = crypto.randomUUID();
  readonly response: Response;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private keepalive: ReturnType<typeof setInterval> | undefined;
  private closed = false;
  private readonly encoder = new TextEncoder();

  constructor(endpoint: string, keepaliveMs = MCP_KEEPALIVE_MS) {
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
        this.write(`event: endpoint\ndata: ${endpoint}?sessionId=${this.sessionId}\n\n`);
        // Bun.serve cuts a stream idle for idleTimeout seconds; a comment line keeps it busy.
        this.keepalive = setInterval(() => this.write(": keepalive\n\n"), keepaliveMs);
      },
      cancel: () => this.finish(),
    });
    this.response = new Response(stream, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-transform",
        connection: "keep-alive",
        "x-accel-buffering": "no",
      },
    });
  }

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error(`MCP session ${this.sessionId} is closed`);
    this.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      this.controller.close();
    } catch {
      // already closed by the client going away
    }
    this.finish();
  }

  /** The client is gone or the server closed the session: stop the timer, tell the server once. */
  finish(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepalive);
    this.onclose?.();
  }

  private write(chunk: string): void {
    if (this.closed) return;
    try {
      this.controller.enqueue(this.encoder.encode(chunk));
    } catch {
      this.finish();
    }
  }
}

interface Session {
  transport: SseTransport;
  server: Server;
  opener: Caller;
}

/** Every open SSE session of one service; each has its own MCP Server. */
export class SseSessions {
  /** In least-recently-used order (a POST moves its session to the end): past the cap the first is closed. */
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly s: Services,
    private readonly max = MCP_MAX_SSE_SESSIONS,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /** GET /sse: a new session; `signal` aborts when the client disconnects. */
  async open(caller: Caller, endpoint: string, signal?: AbortSignal): Promise<Response> {
    const transport = new SseTransport(endpoint);
    const server = createMcpServer(this.s, caller.principal);
    const id = transport.sessionId;
    transport.onclose = () => this.sessions.delete(id);
    this.sessions.set(id, { transport, server, opener: caller });
    if (this.sessions.size > this.max) {
      // Its stream ends; its next POST gets 404 and the client reconnects with GET /sse.
      const [oldest, dropped] = this.sessions.entries().next().value!;
      this.sessions.delete(oldest);
      void dropped.server.close();
    }
    await server.connect(transport);
    signal?.addEventListener("abort", () => transport.finish(), { once: true });
    return transport.response;
  }

  /** POST /messages?sessionId=: one JSON-RPC message into the session; the reply goes out on its stream. */
  async post(sessionId: string | null | undefined, caller: Caller, body: string, headers: Headers): Promise<Response> {
    if (!sessionId) throw invalid("sessionId query parameter is required (the endpoint event of GET /sse names it)");
    const session = this.sessions.get(sessionId);
    if (!session) throw notFound(`no open MCP session ${sessionId.slice(0, 64)}; it ended or never existed: reconnect with GET /sse`);
    checkSessionUse(session.opener, caller, sessionId);
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, session);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw invalid("malformed JSON body: send one JSON-RPC message");
    }
    const message = JSONRPCMessageSchema.safeParse(parsed);
    if (!message.success) throw invalid("the body is not a JSON-RPC 2.0 message");
    const onmessage = session.transport.onmessage;
    if (!onmessage) throw new AppError("unavailable", `MCP session ${sessionId} is not ready`);
    const info: Record<string, string> = {};
    headers.forEach((value, key) => {
      info[key] = value;
    });
    onmessage(message.data, { requestInfo: { headers: info } });
    return new Response("Accepted", { status: 202, headers: { "content-type": "text/plain; charset=utf-8" } });
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.sessions.values()].map((x) => x.server.close()));
    this.sessions.clear();
  }
}
