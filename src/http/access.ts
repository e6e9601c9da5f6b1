import { auditLog } from "../core/audit";
import type { ProjectScope } from "../core/scope";
import type { Services } from "../core/services";
import { authenticate, BYPASS_PRINCIPAL, CONFIG_PRINCIPAL, roleAtLeast, type Principal, type Role } from "../core/tokens";
import { bearerOf, isLoopbackPeer, tokenMatches } from "./auth";
import { localhostBypass } from "./bypass";
import { errorResponse } from "./errors";

/**
 * Who each request acts as, decided once by the app's auth hook (app.ts) and
 * read by the routes, MCP sessions and the audit hook. Keyed by the Request
 * object: Elysia hands every hook and handler the same one.
 */
const principals = new WeakMap<Request, Principal>();
const peers = new WeakMap<Request, string | null>();

export function principalOf(request: Request): Principal | null {
  return principals.get(request) ?? null;
}

/** The projects the request's principal may see (null: every project), for core functions that read across projects. */
export function scopeOf(request: Request): ProjectScope {
  return principals.get(request)?.projects ?? null;
}

export function peerOf(request: Request): string | null {
  return peers.get(request) ?? null;
}

const unauthorized = (message: string) => errorResponse("unauthorized", message, undefined, { "www-authenticate": 'Bearer realm="memsvc"' });

/** A 429 when the caller (its token, or its peer for a refused request) has used its allowance, else null (rate-limit.ts). */
export type OverLimit = (token: string | null, peer: string | null) => Response | null;

/**
 * Authenticates a request: a member token from the database (checked on
 * every request: a revocation through any server counts at once), the
 * config file's token (SQLite only: one home, one owner; on PostgreSQL a
 * server's config token would make whoever holds that home a team admin),
 * or, with no token at all, the localhost bypass when auth.localhostBypass
 * is on (bypass.ts). A presented token, even a wrong one, is never bypassed.
 * Authenticated tokens count against their own rate allowance, refused
 * requests against their peer's; the bypass is not limited. Returns the
 * principal, or the response refusing.
 */
export async function authenticateRequest(
  s: Services,
  request: Request,
  peer: string | null,
  overLimit: OverLimit = () => null,
): Promise<Principal | Response> {
  peers.set(request, peer);
  const presented = bearerOf(request);
  let principal: Principal | null = null;
  let refusal: { reason: string; name?: string; message: string } | null = null;
  if (presented !== null) {
    if (s.storage.engine === "sqlite" && tokenMatches(presented, s.config.token)) principal = CONFIG_PRINCIPAL;
    else {
      const a = await authenticate(s.storage.tokens, presented, s.now());
      if (a.ok) principal = a.principal;
      else
        refusal = {
          reason: a.reason,
          name: a.name,
          message:
            a.reason === "unknown"
              ? "wrong bearer token"
              : `token ${a.name} ${a.reason === "revoked" ? "was revoked" : "has expired"}; ask an admin for a new one`,
        };
    }
    if (principal) {
      const limited = overLimit(presented, peer);
      if (limited) return limited;
    }
  } else {
    const bypass = localhostBypass(s.config, peer, request);
    if (bypass === "granted") principal = BYPASS_PRINCIPAL;
    else if (bypass !== "off") return errorResponse("forbidden", bypass.refused);
    else
      refusal = {
        reason: "missing",
        message: isLoopbackPeer(peer)
          ? "missing bearer token: this server's localhost bypass is off (auth.localhostBypass), so local callers send it too (Authorization: Bearer <token>; `memsvc status` prints it)"
          : "missing bearer token (Authorization: Bearer <token>; `memsvc status` prints it)",
      };
  }
  if (!principal) {
    // Refused attempts count against the peer: a flood of guesses gets 429s, not an endless stream of 401s.
    const limited = overLimit(null, peer);
    if (limited) return limited;
    const r = refusal ?? { reason: "missing", message: "missing bearer token (Authorization: Bearer <token>; `memsvc status` prints it)" };
    auditLog(s).refused(peer, r.reason, r.name);
    return unauthorized(r.message);
  }
  principals.set(request, principal);
  return principal;
}

/**
 * The role a route needs, by method and path, so a new route is safe by
 * default: reads need reader, anything else writer; token management, the
 * audit log and identity writes need admin. MCP's transports need reader
 * here; each tool call is checked against the session's principal (mcp/tools.ts).
 */
export function requiredRole(method: string, path: string): Role {
  if (path === "/tokens" || path.startsWith("/tokens/") || path === "/audit") return "admin";
  if ((path === "/identity" || path === "/context") && method !== "GET" && method !== "HEAD") return "admin";
  if (method === "GET" || method === "HEAD") return "reader";
  // Reads that take a body, and the MCP transports.
  if (path === "/recall-index" || path === "/mcp" || path === "/messages" || path === "/sse") return "reader";
  return "writer";
}

/** 403 in the one error shape when the principal's role is below the route's. */
export function roleRefusal(p: Principal, method: string, path: string): Response | null {
  const need = requiredRole(method, path);
  if (roleAtLeast(p.role, need)) return null;
  return errorResponse("forbidden", `${method} ${path} needs the ${need} role; token ${p.name} is a ${p.role}`);
}
