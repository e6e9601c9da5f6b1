import { AppError } from "../errors";
import type { Principal } from "../core/tokens";

/**
 * Who sent a request, as the HTTP layer's auth decided: with the bearer token,
 * or through the localhost bypass (no token, loopback peer).
 */
export interface Caller {
  viaToken: boolean;
  loopback: boolean;
  /** Who the app's auth found (http/access.ts); tools act with its role and projects. */
  principal: Principal;
}

/**
 * A session belongs to the way it was opened. A token holder may use any
 * session; without the token only a loopback caller may, and only a session
 * that was itself opened through the localhost bypass.
 */
export function checkSessionUse(opener: Caller, caller: Caller, sessionId: string): void {
  // A session acts with its opener's rights: another member's token may not drive it.
  if (caller.viaToken && opener.viaToken && caller.principal.name !== opener.principal.name)
    throw new AppError("forbidden", `MCP session ${sessionId} belongs to token ${opener.principal.name}; open a session of your own`);
  if (caller.viaToken) return;
  if (!caller.loopback) throw new AppError("unauthorized", "missing bearer token (Authorization: Bearer <token>; `memsvc status` prints it)");
  if (opener.viaToken)
    throw new AppError(
      "forbidden",
      `MCP session ${sessionId} was opened with the bearer token; send the same Authorization header with every request of the session`,
    );
}
