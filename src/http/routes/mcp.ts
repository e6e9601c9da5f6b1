import { Elysia } from "elysia";
import type { Services } from "../../core/services";
import type { Caller } from "../../mcp";
import type { McpSessions } from "../../mcp/registry";
import { isLoopbackPeer } from "../auth";
import { principalOf } from "../access";
import { AppError } from "../../errors";
import { utf8Text } from "../json-body";

type Server = { requestIP(r: Request): { address: string } | null; timeout?(r: Request, seconds: number): void } | null;

/** How the app's auth let this request in: the token, or the localhost bypass. */
function callerOf(_s: Services, request: Request, server: Server): Caller {
  const principal = principalOf(request);
  // Every MCP route is behind the app's auth hook; a request without a principal is a wiring mistake: fail closed.
  if (!principal) throw new AppError("unauthorized", "missing bearer token");
  return { viaToken: principal.via !== "bypass", loopback: isLoopbackPeer(server?.requestIP(request)?.address), principal };
}

/** An event stream lives as long as the client: keepalives handle idleTimeout, this lifts it for the one request. */
function untimed(request: Request, server: Server): void {
  server?.timeout?.(request, 0);
}

/** MCP tools: the legacy HTTP+SSE transport (GET /sse, POST /messages) and Streamable HTTP (/mcp). */
export function mcpRoutes(s: Services) {
  // The MCP SDK loads with the first MCP request, not with the server (see mcp/registry.ts).
  let loaded: Promise<McpSessions> | null = null;
  const sessions = () => (loaded ??= import("../../mcp").then((m) => m.mcpSessions(s)));
  const mcp = async ({ request, server }: { request: Request; server: Server }) => {
    const caller = callerOf(s, request, server);
    if (request.method === "GET") untimed(request, server);
    // The SDK decodes bodies leniently (invalid bytes become U+FFFD): check them as strictly as REST bodies first.
    const checked =
      request.method === "POST"
        ? new Request(request.url, { method: "POST", headers: request.headers, body: await utf8Text(request), signal: request.signal })
        : request;
    return (await sessions()).streamable.handle(checked, caller);
  };
  return new Elysia({ name: "mcp" })
    .get("/sse", async ({ request, server }) => {
      untimed(request, server);
      return (await sessions()).sse.open(callerOf(s, request, server), "/messages", request.signal);
    })
    .post(
      "/messages",
      async ({ request, server }) =>
        (await sessions()).sse.post(new URL(request.url).searchParams.get("sessionId"), callerOf(s, request, server), await utf8Text(request), request.headers),
      { parse: "none" },
    )
    .get("/mcp", mcp)
    .post("/mcp", mcp, { parse: "none" })
    .delete("/mcp", mcp, { parse: "none" });
}
