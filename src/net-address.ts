import type { Config } from "./config";

/** A bind address only this machine can reach: 127.0.0.0/8, ::1 (also IPv4-mapped) or localhost. */
export function isLoopbackBind(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1");
  return h === "localhost" || h.endsWith(".localhost") || h === "::1" || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** What the start-up log (and doctor) says about how this server is reached; empty when nothing needs saying. */
export function networkWarnings(config: Pick<Config, "host" | "tls" | "auth">): string[] {
  if (isLoopbackBind(config.host)) return [];
  const out = [
    `bound to ${config.host}, not a loopback address: the service is exposed to the network; callers need the bearer token (\`memsvc status\` prints it)${config.auth.localhostBypass ? ", except loopback callers on this machine (auth.localhostBypass is on: a reverse proxy on this machine would let every request in)" : ", loopback callers too"}`,
  ];
  if (!config.tls.cert && !config.tls.proxy)
    out.push(
      "no TLS: the token and memories cross the network in clear. Set tls.cert and tls.key in config.json, or put a TLS-terminating proxy in front and set tls.proxy: true",
    );
  return out;
}
