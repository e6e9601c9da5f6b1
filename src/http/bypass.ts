import type { Config } from "../config";
import { browserGuard, isLoopbackPeer } from "./auth";

/**
 * What the localhost bypass says about a request that presented no token:
 * - "off": no bypass for it (bypass disabled, or the peer is not loopback): the token is needed;
 * - "granted": let in without a token;
 * - { refused }: loopback, but a browser could be driving it (cross-site Origin, foreign Host): 403.
 */
export type BypassDecision = "off" | "granted" | { refused: string };

/**
 * The one place that decides whether a token-less request skips auth, so the
 * token code (per-member tokens, scopes) can build on it rather than copy it.
 * `config.auth.localhostBypass` is resolved in config.ts (default: on only for
 * SQLite on a loopback bind), because a reverse proxy on the same host makes
 * every remote request arrive from 127.0.0.1.
 */
export function localhostBypass(config: Pick<Config, "auth">, peer: string | null | undefined, request: Request): BypassDecision {
  if (!config.auth.localhostBypass || !isLoopbackPeer(peer)) return "off";
  const refused = browserGuard(request);
  return refused ? { refused } : "granted";
}
