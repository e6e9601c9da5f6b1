import { rootCertificates } from "node:tls";
import { pathsFor, readConfigFile, type Config } from "./config";
import { readUtf8File } from "./utf8";

/**
 * How client commands (hooks, capture, status, doctor, history, the stdio MCP
 * bridge) talk to the server: with the config's token on every request (the
 * server's localhost bypass may be off), and over HTTPS trusting the system
 * roots plus tls.ca and, on the server's own machine, its tls.cert (a
 * self-signed certificate is its own CA). NODE_EXTRA_CA_CERTS works as well.
 */
export function serverHeaders(config: Pick<Config, "token">, extra: Record<string, string> = {}): Record<string, string> {
  return config.token ? { authorization: `Bearer ${config.token}`, ...extra } : { ...extra };
}

const caCache = new Map<string, string[] | null>();

/** The `tls` option for fetch to an https server URL, or undefined (plain HTTP, or nothing extra to trust). */
export function serverTls(config: Pick<Config, "tls" | "serverUrl">, url: string = config.serverUrl): { ca: string[] } | undefined {
  if (!url.startsWith("https:")) return undefined;
  const files = [config.tls.ca, config.tls.cert].filter((f): f is string => f !== null);
  if (files.length === 0) return undefined;
  const key = files.join("\0");
  if (!caCache.has(key)) {
    const extra: string[] = [];
    for (const f of files) {
      try {
        extra.push(readUtf8File(f));
      } catch {
        // An unreadable file is the server's or the user's to fix; the request then fails with the TLS error that says why.
      }
    }
    // Bun's fetch replaces the default roots with `ca`: keep them, so a CA-signed certificate still verifies.
    caCache.set(key, extra.length ? [...rootCertificates, ...extra] : null);
  }
  const ca = caCache.get(key);
  return ca ? { ca } : undefined;
}

/** fetch() to the server: `path` is appended to serverUrl, or a full URL (a live server.json's) is used as is. */
export function serverFetch(
  config: Pick<Config, "token" | "tls" | "serverUrl">,
  path: string,
  init: RequestInit & { headers?: Record<string, string> } = {},
): Promise<Response> {
  const url = /^https?:\/\//.test(path) ? path : `${config.serverUrl}${path}`;
  const tls = serverTls(config, url);
  return fetch(url, { ...init, headers: serverHeaders(config, init.headers), ...(tls ? { tls } : {}) } as RequestInit);
}

/**
 * Whether the server of `home` answers /health at `url` (from its server.json):
 * setup and service commands run before any client config is loaded, so the
 * CA to trust for an https server comes from that home's config.json.
 */
export async function healthAnswers(home: string, url: string, timeoutMs: number): Promise<boolean> {
  let tls: Config["tls"] = { cert: null, key: null, ca: null, proxy: false };
  try {
    const file = readConfigFile(pathsFor(home).config);
    tls = { cert: file.tls?.cert ?? null, key: file.tls?.key ?? null, ca: file.tls?.ca ?? null, proxy: false };
  } catch {
    // A broken config.json is reported by the command that reads it; the probe just trusts the system roots.
  }
  try {
    const res = await serverFetch({ token: null, tls, serverUrl: url }, "/health", { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer().catch(() => {});
    return res.ok;
  } catch {
    return false;
  }
}
