import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isLoopbackPeer, tokenMatches } from "../../src/http/auth";
import { requestFrom, startServer, type TestServer } from "../helpers/server";

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer({ hostname: "0.0.0.0" });
});
afterAll(async () => {
  await srv.stop();
});

const remote = (path: string, headers: Record<string, string> = {}, method = "GET") => requestFrom("127.0.0.2", `${srv.url}${path}`, { headers, method });
const local = (path: string, headers: Record<string, string> = {}) => requestFrom("127.0.0.1", `${srv.url}${path}`, { headers });

describe("remote peers (127.0.0.2)", () => {
  test("no token: 401 JSON with WWW-Authenticate; wrong token 401; right token 200", async () => {
    const none = await remote("/recent");
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(none.json().error).toMatchObject({ code: "unauthorized", message: expect.stringMatching(/token/) });
    const wrong = await remote("/recent", { authorization: "Bearer not-the-token" });
    expect(wrong.status).toBe(401);
    expect(wrong.json().error.message).toMatch(/wrong/);
    expect((await remote("/recent", { authorization: `Bearer ${srv.token}` })).status).toBe(200);
    expect((await remote("/recent", { authorization: `bearer ${srv.token}` })).status).toBe(200);
  });

  test("forwarding headers never grant the bypass", async () => {
    const spoofs: Record<string, string>[] = [
      { "x-forwarded-for": "127.0.0.1" },
      { "x-real-ip": "127.0.0.1" },
      { forwarded: "for=127.0.0.1" },
      { host: "localhost" },
    ];
    for (const h of spoofs) {
      expect((await remote("/recent", h)).status).toBe(401);
    }
  });

  test("?token= is not accepted by the API", async () => {
    expect((await remote(`/recent?token=${srv.token}`)).status).toBe(401);
  });

  test("/health is public; write endpoints need the token too", async () => {
    expect((await remote("/health")).status).toBe(200);
    // The language-model probe spends a model call: not public like /health.
    expect((await remote("/health/llm")).status).toBe(401);
    const probe = await remote("/health/llm", { authorization: `Bearer ${srv.token}` });
    expect(probe.status).toBe(200);
    expect(probe.json()).toMatchObject({ configured: false, llm: "not configured", ok: false });
    expect((await remote("/ingest", {}, "POST")).status).toBe(401);
    expect((await remote("/memory?id=x", {}, "DELETE")).status).toBe(401);
  });
});

describe("localhost bypass and its browser guard", () => {
  test("loopback needs no token", async () => {
    expect((await local("/recent")).status).toBe(200);
  });

  test("a cross-site Origin or a foreign Host is refused 403", async () => {
    const evil = await local("/recent", { origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    expect(evil.json().error.code).toBe("forbidden");
    expect((await local("/recent", { host: "evil.example:8787" })).status).toBe(403);
    expect((await local("/recent", { origin: "null" })).status).toBe(403);
    expect((await local("/recent", { origin: `http://localhost:${srv.port}` })).status).toBe(200);
    expect((await local("/recent", { origin: `http://127.0.0.1:${srv.port}`, host: `127.0.0.1:${srv.port}` })).status).toBe(200);
    expect((await local("/recent", { host: `[::1]:${srv.port}` })).status).toBe(200);
  });

  test("no wildcard CORS", async () => {
    const r = await local("/recent", { origin: `http://localhost:${srv.port}` });
    expect(r.headers["access-control-allow-origin"]).toBeUndefined();
  });

  test("a valid token works from a browser origin too (remote pages send it)", async () => {
    expect((await local("/recent", { origin: "https://evil.example", authorization: `Bearer ${srv.token}` })).status).toBe(200);
  });
});

describe("the token is compared exactly", () => {
  // Generated tokens are lower-case hex, so a case-folding compare would pass every other test.
  const flipCase = (t: string) => [...t].map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join("");

  test("a case-changed token is 401 from a remote peer and from loopback", async () => {
    const upper = flipCase(srv.token);
    expect(upper).not.toBe(srv.token);
    expect((await remote("/recent", { authorization: `Bearer ${upper}` })).status).toBe(401);
    expect((await local("/recent", { authorization: `Bearer ${upper}` })).status).toBe(401);
    expect((await remote("/recent", { authorization: `Bearer ${srv.token}` })).status).toBe(200);
  });

  test("case, prefix and extension of the token never match", () => {
    expect(tokenMatches("Secret-Token", "secret-token")).toBe(false);
    expect(tokenMatches("SECRET-TOKEN", "secret-token")).toBe(false);
    expect(tokenMatches("secret-toke", "secret-token")).toBe(false);
    expect(tokenMatches("secret-token2", "secret-token")).toBe(false);
    expect(tokenMatches("secret-token", "secret-token")).toBe(true);
    expect(tokenMatches("", "secret-token")).toBe(false);
    expect(tokenMatches("secret-token", null)).toBe(false);
  });
});

describe("the loopback peers of the bypass", () => {
  test("exactly 127.0.0.1, ::1 and ::ffff:127.0.0.1", () => {
    for (const peer of ["127.0.0.1", "::1", "::ffff:127.0.0.1"]) expect(isLoopbackPeer(peer)).toBe(true);
    for (const peer of ["127.0.0.2", "127.1.0.1", "0.0.0.0", "::", "::ffff:127.0.0.2", "10.0.0.1", "localhost", "", null, undefined])
      expect(isLoopbackPeer(peer)).toBe(false);
  });
});
