import http from "node:http";
import { createApp } from "../../src/http/app";
import { LISTEN_MAX_REQUEST_BODY_SIZE } from "../../src/http/limits";
import { makeServices, TEST_TOKEN, type TestServices, type TestServicesOptions } from "./services";

export interface TestServer {
  url: string;
  port: number;
  token: string;
  services: TestServices;
  stop(): Promise<void>;
}

/** The real app on a real socket (127.0.0.1, port 0), as `memsvc server` runs it. */
export async function startServer(opts: TestServicesOptions & { hostname?: string } = {}): Promise<TestServer> {
  const services = makeServices(opts);
  const app = createApp(services);
  app.listen({ port: 0, hostname: opts.hostname ?? "127.0.0.1", maxRequestBodySize: LISTEN_MAX_REQUEST_BODY_SIZE, idleTimeout: 60, reusePort: false });
  const port = app.server!.port!;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    token: TEST_TOKEN,
    services,
    async stop() {
      await app.stop(true);
      await services.close();
    },
  };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json(): any;
}

/**
 * An HTTP request whose socket is bound to `localAddress` (e.g. 127.0.0.2),
 * so the server sees a non-localhost peer. fetch() cannot choose its source.
 */
export function requestFrom(
  localAddress: string,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      // A connection of its own (agent: false): a kept-alive one the server has just closed
      // fails the next request with "socket hang up" (seen in CI).
      { host: u.hostname, port: Number(u.port), path: u.pathname + u.search, method: init.method ?? "GET", headers: init.headers, localAddress, agent: false },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) }));
      },
    );
    req.on("error", reject);
    if (init.body !== undefined) req.write(init.body);
    req.end();
  });
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}
