import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { handleHook } from "../../src/capture/hooks";
import { checkNetwork } from "../../src/cli/doctor-checks";
import { loadConfig } from "../../src/config";
import { createApp } from "../../src/http/app";
import { networkWarnings } from "../../src/net-address";
import { onPostgres, schemaForHome, testDatabaseUrl } from "../helpers/engine";
import { startPglite, type PgliteProcess } from "../helpers/pglite";
import { requestFrom, startServer, type TestServer } from "../helpers/server";
import { makeServices, TEST_TOKEN } from "../helpers/services";

/**
 * auth.localhostBypass on real sockets: on by default only for SQLite on a
 * loopback bind; off for PostgreSQL and for a non-loopback bind, where a
 * reverse proxy on the same host would turn every remote caller into 127.0.0.1.
 */
let pg: PgliteProcess | null = null;
const servers: TestServer[] = [];
const pgUrl = () => (onPostgres ? testDatabaseUrl() : pg!.url);

beforeAll(async () => {
  if (!onPostgres) pg = await startPglite();
});
afterAll(async () => {
  for (const s of servers) await s.stop();
  pg?.stop();
});

async function server(config: Record<string, unknown>, hostname = "127.0.0.1", env: Record<string, string> = {}): Promise<TestServer> {
  const home = mkdtempSync(join(tmpdir(), "memsvc-bypass-"));
  const withPg = config.storage === "postgres" ? { database_url: pgUrl(), database_schema: schemaForHome(home) } : {};
  const s = await startServer({ home, config: { storage: "sqlite", ...config, ...withPg }, hostname, env });
  servers.push(s);
  return s;
}

const fromLoopback = (s: TestServer, headers: Record<string, string> = {}) => requestFrom("127.0.0.1", `${s.url}/recent`, { headers });
const fromRemote = (s: TestServer, headers: Record<string, string> = {}) => requestFrom("127.0.0.2", `${s.url}/recent`, { headers });
const bearer = { authorization: `Bearer ${TEST_TOKEN}` };

describe("the bypass matrix (real sockets)", () => {
  const cases: { name: string; config: Record<string, unknown>; hostname?: string; bypass: boolean }[] = [
    { name: "SQLite on a loopback bind (default: on)", config: {}, bypass: true },
    { name: "SQLite on a loopback bind, auth.localhostBypass false", config: { auth: { localhostBypass: false } }, bypass: false },
    { name: "SQLite on a non-loopback bind (default: off)", config: { host: "0.0.0.0" }, hostname: "0.0.0.0", bypass: false },
    {
      name: "SQLite on a non-loopback bind, auth.localhostBypass true",
      config: { host: "0.0.0.0", auth: { localhostBypass: true } },
      hostname: "0.0.0.0",
      bypass: true,
    },
    { name: "PostgreSQL on a loopback bind (default: off)", config: { storage: "postgres" }, bypass: false },
    { name: "PostgreSQL, auth.localhostBypass true", config: { storage: "postgres", auth: { localhostBypass: true } }, bypass: true },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const s = await server(c.config, c.hostname);
      expect(s.services.config.auth.localhostBypass).toBe(c.bypass);
      const none = await fromLoopback(s);
      expect(none.status).toBe(c.bypass ? 200 : 401);
      if (!c.bypass) {
        expect(none.json().error.code).toBe("unauthorized");
        expect(none.json().error.message).toContain("localhost bypass is off");
        expect(none.headers["www-authenticate"]).toMatch(/^Bearer/);
      }
      // The token works from anywhere; a wrong one is refused from loopback too, bypass or not.
      expect((await fromLoopback(s, bearer)).status).toBe(200);
      expect((await fromLoopback(s, { authorization: "Bearer wrong-token" })).status).toBe(401);
      expect((await fromRemote(s)).status).toBe(401);
      expect((await fromRemote(s, bearer)).status).toBe(200);
      // Forwarding headers never stand in for the peer.
      expect((await fromRemote(s, { "x-forwarded-for": "127.0.0.1" })).status).toBe(401);
      // Public shells stay public either way.
      expect((await requestFrom("127.0.0.1", `${s.url}/health`)).status).toBe(200);
    });
  }

  test("MEMSVC_LOCALHOST_BYPASS overrides the config and the default", async () => {
    const off = await server({}, "127.0.0.1", { MEMSVC_LOCALHOST_BYPASS: "0" });
    expect(off.services.config.auth.localhostBypassFrom).toBe("MEMSVC_LOCALHOST_BYPASS");
    expect((await fromLoopback(off)).status).toBe(401);
    const on = await server({ storage: "postgres", auth: { localhostBypass: false } }, "127.0.0.1", { MEMSVC_LOCALHOST_BYPASS: "true" });
    expect((await fromLoopback(on)).status).toBe(200);
  });
});

describe("resolving auth.localhostBypass", () => {
  const resolve = (config: Record<string, unknown>, env: Record<string, string> = {}) => {
    const home = mkdtempSync(join(tmpdir(), "memsvc-bypass-cfg-"));
    writeFileSync(join(home, "config.json"), JSON.stringify(config));
    return loadConfig({ MEMSVC_HOME: home, ...env }).auth;
  };
  test("defaults, the key, the variable, and bad values", () => {
    expect(resolve({})).toMatchObject({ localhostBypass: true, localhostBypassFrom: "default" });
    for (const host of ["localhost", "127.0.0.5", "::1", "[::1]"]) expect(resolve({ host }).localhostBypass).toBe(true);
    for (const host of ["0.0.0.0", "::", "10.1.2.3", "myhost.lan"]) expect(resolve({ host }).localhostBypass).toBe(false);
    expect(resolve({ storage: "postgres", database_url: "postgres://u@127.0.0.1:5/db" }).localhostBypass).toBe(false);
    expect(resolve({ host: "0.0.0.0", auth: { localhostBypass: true } })).toMatchObject({ localhostBypass: true, localhostBypassFrom: "config" });
    expect(resolve({ auth: { localhostBypass: false } }).localhostBypass).toBe(false);
    expect(() => resolve({ auth: { localhostBypass: "yes" } })).toThrow(/auth.localhostBypass" must be true or false/);
    expect(() => resolve({ auth: { bypass: true } })).toThrow(/unknown key "auth.bypass"/);
    expect(() => resolve({}, { MEMSVC_LOCALHOST_BYPASS: "maybe" })).toThrow(/MEMSVC_LOCALHOST_BYPASS must be 1 or 0/);
  });
});

describe("the start-up warning of a network bind", () => {
  const cfg = (host: string, tls: { cert?: string; proxy?: boolean } = {}, bypass = false) => ({
    host,
    tls: { cert: tls.cert ?? null, key: tls.cert ? "/k.pem" : null, ca: null, proxy: tls.proxy ?? false },
    auth: { localhostBypass: bypass, localhostBypassFrom: "default" as const, rateLimitPerMinute: 0 },
  });
  test("a non-loopback bind with neither TLS nor a proxy warns about clear text; TLS or tls.proxy silence that line", () => {
    expect(networkWarnings(cfg("127.0.0.1"))).toEqual([]);
    const plain = networkWarnings(cfg("0.0.0.0"));
    expect(plain).toHaveLength(2);
    expect(plain[1]).toMatch(/no TLS.*tls\.cert and tls\.key.*tls\.proxy/);
    expect(networkWarnings(cfg("0.0.0.0", { cert: "/c.pem" }))).toHaveLength(1);
    expect(networkWarnings(cfg("0.0.0.0", { proxy: true }))).toHaveLength(1);
    expect(networkWarnings(cfg("0.0.0.0", { proxy: true }, true))[0]).toContain("auth.localhostBypass is on");
  });

  test("doctor's network check warns on the same condition and says what to set", () => {
    const check = (config: Record<string, unknown>) => {
      const home = mkdtempSync(join(tmpdir(), "memsvc-doctor-net-"));
      writeFileSync(join(home, "config.json"), JSON.stringify(config));
      return checkNetwork({ config: loadConfig({ MEMSVC_HOME: home }), env: {}, health: null });
    };
    const local = check({});
    expect([local.name, local.outcome]).toEqual(["network", "ok"]);
    expect(local.detail).toContain("localhost bypass on (default)");
    const exposed = check({ host: "0.0.0.0" });
    expect(exposed.outcome).toBe("warn");
    expect(exposed.detail).toContain("no TLS");
    expect(exposed.advice).toContain("tls.cert and tls.key");
    expect(exposed.detail).toContain("localhost bypass off");
    const proxied = check({ host: "0.0.0.0", tls: { proxy: true } });
    expect(proxied.outcome).toBe("warn");
    expect(proxied.detail).toContain("behind a TLS proxy");
    expect(proxied.detail).not.toContain("no TLS");
  });
});

describe("clients send the token when the bypass is off", () => {
  test("the session-start hook still gets identity and learnings from a bypass-off server", async () => {
    const s = await server({ auth: { localhostBypass: false } });
    const put = await requestFrom("127.0.0.1", `${s.url}/identity`, {
      method: "PUT",
      headers: { ...bearer, "content-type": "application/json" },
      body: JSON.stringify({ sections: { style: "Prefers small focused commits." } }),
    });
    expect(put.status).toBe(200);
    const clientHome = mkdtempSync(join(tmpdir(), "memsvc-bypass-client-"));
    writeFileSync(join(clientHome, "config.json"), JSON.stringify({ token: TEST_TOKEN, serverUrl: s.url }));
    const out = await handleHook(
      "session-start",
      { session_id: "s1", cwd: "/tmp/proj" },
      loadConfig({ MEMSVC_HOME: clientHome, MEMSVC_OFFLINE: "1" }),
      Date.now() + 5000,
    );
    expect(out).toContain("Prefers small focused commits.");
    // Without the token the same hook gets nothing: the assertion above depends on the header.
    writeFileSync(join(clientHome, "config.json"), JSON.stringify({ serverUrl: s.url }));
    const bare = await handleHook(
      "session-start",
      { session_id: "s2", cwd: "/tmp/proj" },
      loadConfig({ MEMSVC_HOME: clientHome, MEMSVC_OFFLINE: "1" }),
      Date.now() + 5000,
    );
    expect(bare).not.toContain("Prefers small focused commits.");
  });
});

describe("the browser guard judges an absolute request target", () => {
  test("a request whose URL names another host is refused on the bypass, even with Host: 127.0.0.1", async () => {
    const s = makeServices();
    const app = createApp(s, [], { peerOf: () => "127.0.0.1" });
    try {
      const abs = await app.handle(new Request("http://other.example/recent", { headers: { host: "127.0.0.1" } }));
      expect(abs.status).toBe(403);
      expect(((await abs.json()) as any).error.message).toContain("request target host other.example");
      expect((await app.handle(new Request("http://other.example:8787/recent", { headers: { host: "localhost:8787" } }))).status).toBe(403);
      expect((await app.handle(new Request("http://127.0.0.1:8787/recent", { headers: { host: "127.0.0.1:8787" } }))).status).toBe(200);
      expect((await app.handle(new Request("http://localhost/recent"))).status).toBe(200);
      // The token holder is not a browser riding the bypass: an absolute target does not matter then.
      expect((await app.handle(new Request("http://other.example/recent", { headers: { host: "127.0.0.1", ...bearer } }))).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  test("on a real socket, an absolute-form target with a foreign Host is refused", async () => {
    const s = await server({});
    const net = await import("node:net");
    const raw = await new Promise<string>((resolve, reject) => {
      const c = net.connect(s.port, "127.0.0.1", () => c.write("GET http://other.example/recent HTTP/1.1\r\nHost: other.example\r\nConnection: close\r\n\r\n"));
      let body = "";
      c.on("data", (d) => (body += d));
      c.on("close", () => resolve(body));
      c.on("error", reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 403/);
  });
});
