import { openapi } from "@elysiajs/openapi";
import { Elysia, type ValidationError } from "elysia";
import { inputErrorMessage } from "../core/validate";
import { AppError } from "../errors";
import type { Services } from "../core/services";
import { authenticateRequest, principalOf, roleRefusal } from "./access";
import { auditRoute } from "./audit-hook";
import { RateLimiter, rateKeyOf as defaultRateKeyOf, type RateKeyOf } from "./rate-limit";
import { enforceScope } from "./scope";
import { storageFailure } from "../store/failures";
import { appErrorResponse, errorResponse } from "./errors";
import { parseJsonBody } from "./json-body";
import { bodyTooLargeMessage, MAX_BODY_BYTES } from "./limits";
import { assetRoutes } from "./routes/assets";
import { browserRoutes } from "./routes/browser";
import { dashboardRoutes } from "./routes/dashboard";
import { distillRoutes } from "./routes/distill";
import { graphRoutes } from "./routes/graph";
import { healthRoutes } from "./routes/health";
import { identityRoutes } from "./routes/identity";
import { mcpRoutes } from "./routes/mcp";
import { memoryRoutes } from "./routes/memories";
import { recallRoutes } from "./routes/recall";
import { receiptRoutes } from "./routes/receipts";
import { sessionsPageRoutes } from "./routes/sessions";
import { rootRoutes } from "./routes/root";
import { tokenRoutes } from "./routes/tokens";
import { VERSION } from "../version";

export { MAX_BODY_BYTES } from "./limits";

/** Paths anyone may GET: health and page shells, which hold no data. */
export function isPublicPath(method: string, path: string): boolean {
  if (method !== "GET" && method !== "HEAD") return false;
  return (
    path === "/" ||
    path === "/health" ||
    path === "/memories" ||
    path === "/sessions" ||
    path === "/favicon.svg" ||
    path === "/favicon.ico" ||
    path === "/viz" ||
    path.startsWith("/viz/vendor/") ||
    path === "/identity/ui" ||
    path === "/dashboard" ||
    path.startsWith("/dashboard/vendor/") ||
    path.startsWith("/assets/")
  );
}

/** The request path, even when request.url cannot be parsed (errors are reported for any request). */
function pathOf(request: Request): string {
  return request.url.replace(/^[a-z]+:\/\/[^/?#]*/i, "").replace(/[?#][\s\S]*$/, "") || "/";
}

const OPENAPI_INFO = {
  info: {
    title: "memsvc",
    version: VERSION,
    description:
      "Long-term memory service for software agents. Every endpoint except GET /health needs Authorization: Bearer <token> from non-loopback callers.",
  },
  components: { securitySchemes: { bearer: { type: "http" as const, scheme: "bearer" } } },
  security: [{ bearer: [] }],
};

export interface AppOptions {
  /** Socket peer address of a request; in-process requests have none and count as remote. */
  peerOf?: (request: Request) => string | null;
  /** Who a request counts against for the rate limit (default: its token, or its peer when refused). */
  rateKeyOf?: RateKeyOf;
}

export type RouteGroup = (s: Services) => Elysia<any, any, any, any, any, any, any>;

export function createApp(s: Services, extra: RouteGroup[] = [], opts: AppOptions = {}) {
  const limiter = new RateLimiter(s.config.auth.rateLimitPerMinute);
  const rateKeyOf = opts.rateKeyOf ?? defaultRateKeyOf;
  const perMinute = s.config.auth.rateLimitPerMinute;
  /** A 429 when this caller has used its allowance, else null. */
  const overLimit = (token: string | null, peer: string | null): Response | null => {
    const d = limiter.take(rateKeyOf({ token, peer }));
    if (d.ok) return null;
    return errorResponse(
      "rate_limited",
      `too many requests: at most ${perMinute} a minute per ${token === null ? "address for refused requests" : "token"}; retry in ${d.retryAfterSeconds} s`,
      { retry_after: d.retryAfterSeconds },
      { "retry-after": String(d.retryAfterSeconds) },
    );
  };
  let app = new Elysia()
    .onRequest(async ({ request, server }) => {
      // Bun builds request.url from the Host header; one like "localhost:8787.evil.com" makes it unparseable.
      if (!URL.canParse(request.url))
        return errorResponse("invalid", `malformed Host header ${JSON.stringify(request.headers.get("host")?.slice(0, 100) ?? "")}`);
      const url = new URL(request.url);
      const length = Number(request.headers.get("content-length") ?? 0);
      if (length > MAX_BODY_BYTES) return errorResponse("too_large", bodyTooLargeMessage(length));
      // Start-up work (calibration, warm-ups) waits for a lull in traffic (core/slices.ts): the
      // requests let in to do work. Pages, static files and /health are not traffic: they are
      // answered from memory or a counter row (on PostgreSQL /health's counts run in the database,
      // not on this thread), and a browser tab or a monitor polling them every 5 ms held that work
      // back for its full 30 s. Refused requests are not traffic either.
      if (isPublicPath(request.method, url.pathname)) return;
      const peer = opts.peerOf ? opts.peerOf(request) : (server?.requestIP(request)?.address ?? null);
      const principal = await authenticateRequest(s, request, peer, overLimit);
      if (principal instanceof Response) return principal;
      const refused = roleRefusal(principal, request.method, url.pathname);
      if (refused) return refused;
      s.traffic.note();
    })
    // After parsing and validation, before the handler: a project-scoped token's request is narrowed to its projects (scope.ts).
    .onBeforeHandle({ as: "global" }, async ({ request, path, query, body }) => {
      const p = principalOf(request);
      if (p) await enforceScope(s, p, request.method, path, request, query, body);
    })
    .onAfterHandle({ as: "global" }, ({ request, path, query, body, response }) => {
      const p = principalOf(request);
      if (p && request.method !== "GET" && request.method !== "HEAD") auditRoute(s, p, request, path, query, body, response);
    })
    .onError(({ code, error, request }) => {
      if (error instanceof AppError) return appErrorResponse(error);
      // parseJsonBody's refusals arrive wrapped in Elysia's ParseError.
      if (code === "PARSE" && (error as Error).cause instanceof AppError) return appErrorResponse((error as Error).cause as AppError);
      const storage = storageFailure(error);
      if (storage) {
        s.log("error", `${request.method} ${pathOf(request)}: ${storage.message}`);
        return appErrorResponse(storage);
      }
      switch (code) {
        case "PARSE":
          return errorResponse("invalid", "malformed JSON body");
        case "VALIDATION": {
          // Route schemas are the operations' schemas (core/<capability>/schema.ts): the same wording as MCP.
          const v = error as ValidationError;
          return errorResponse("invalid", inputErrorMessage(v.all as never, v.value).slice(0, 500));
        }
        case "NOT_FOUND": {
          const path = pathOf(request);
          return errorResponse("not_found", `no route ${request.method} ${path}`);
        }
      }
      const id = crypto.randomUUID().slice(0, 8);
      s.log("error", `unhandled error ${id} on ${request.method} ${pathOf(request)}`, { error: String((error as Error)?.stack ?? error) });
      return errorResponse("internal", `internal error (reference ${id}); see the server log`);
    })
    // The MCP transports read their own bodies: mounted before the JSON body parser, which applies only to routes after it.
    .use(mcpRoutes(s))
    .onParse(parseJsonBody)
    // The OpenAPI document of every route below, built from their schemas (behind the token like any data route).
    .use(openapi({ path: "/openapi", specPath: "/openapi.json", provider: null, documentation: OPENAPI_INFO }))
    .use(rootRoutes(s))
    .use(healthRoutes(s))
    .use(assetRoutes(s))
    .use(graphRoutes(s))
    .use(memoryRoutes(s))
    .use(browserRoutes(s))
    .use(recallRoutes(s))
    .use(receiptRoutes(s))
    .use(sessionsPageRoutes())
    .use(distillRoutes(s))
    .use(identityRoutes(s))
    .use(dashboardRoutes(s))
    .use(tokenRoutes(s));
  for (const group of extra) app = app.use(group(s)) as typeof app;
  return app;
}
