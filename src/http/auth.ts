import { createHash, timingSafeEqual } from "node:crypto";

/** Peers that get the localhost bypass: exactly 127.0.0.1 and ::1 (also as IPv4-mapped ::ffff:127.0.0.1). */
export function isLoopbackPeer(address: string | null | undefined): boolean {
  return address === "127.0.0.1" || address === "::1" || address === "::ffff:127.0.0.1";
}

/** Constant-time token check: both sides hashed to equal length first. */
export function tokenMatches(presented: string | null, expected: string | null): boolean {
  if (!presented || !expected) return false;
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

export function bearerOf(request: Request): string | null {
  const h = request.headers.get("authorization");
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : null;
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** Host header (or Origin host) names this machine's loopback, with or without a port. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase();
  const name = h.startsWith("[") ? h.slice(0, h.indexOf("]") + 1) : h.replace(/:\d+$/, "");
  return LOOPBACK_HOSTS.has(name) || name.endsWith(".localhost");
}

/**
 * The bypass must not let a web page drive the service through the user's
 * browser: a cross-site Origin or a non-loopback Host (DNS rebinding) is
 * refused even though the socket is local.
 */
export function browserGuard(request: Request): string | null {
  const origin = request.headers.get("origin");
  if (origin && origin !== "null") {
    let host: string;
    try {
      host = new URL(origin).host;
    } catch {
      return "malformed Origin header";
    }
    if (!isLoopbackHost(host)) return `cross-site request from origin ${origin} refused`;
  } else if (origin === "null") {
    return "requests from an opaque origin are refused";
  }
  const host = request.headers.get("host");
  if (host && !isLoopbackHost(host)) return `Host ${host} is not a loopback name (DNS rebinding guard)`;
  // An absolute-form target (`GET http://other.example/recent`) names its own host, which RFC 9112
  // says wins over Host: judge the URL the runtime built too. (Bun 1.4 builds it from Host and drops
  // the target's authority, oven-sh/bun#33002; an in-process caller or a runtime that keeps it is judged here.)
  const target = targetHost(request.url);
  if (target !== null && !isLoopbackHost(target)) return `request target host ${target} is not a loopback name (DNS rebinding guard)`;
  return null;
}

function targetHost(url: string): string | null {
  try {
    return new URL(url).host || null;
  } catch {
    return null;
  }
}
