import { Elysia } from "elysia";
import type { Services } from "../../core/services";
import { VERSION } from "../../version";

/** What GET / names: the pages (public shells; their data needs the token from remote callers) and /health. */
export const ROOT_INDEX = {
  service: "memsvc",
  version: VERSION,
  pages: { memories: "/memories", graph: "/viz", identity: "/identity/ui", dashboard: "/dashboard" },
  health: "/health",
  auth: "every other endpoint needs Authorization: Bearer <token> from non-loopback callers (`memsvc status` prints the token)",
} as const;

/**
 * GET /: a browser (Accept names text/html) is sent to the memory browser;
 * other clients get a small JSON index instead of a 404. Public, like the
 * page shells: it holds no data.
 */
export function rootRoutes(_s: Services) {
  return new Elysia({ name: "root" }).get("/", ({ request }) => {
    if (/\btext\/html\b/i.test(request.headers.get("accept") ?? ""))
      return new Response(null, { status: 303, headers: { location: "/memories", "cache-control": "no-cache" } });
    return ROOT_INDEX;
  });
}
