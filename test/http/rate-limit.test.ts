import { afterAll, describe, expect, test } from "bun:test";
import { createApp } from "../../src/http/app";
import { RateLimiter, rateKeyOf } from "../../src/http/rate-limit";
import { requestFrom, startServer, type TestServer } from "../helpers/server";
import { makeServices, TEST_TOKEN } from "../helpers/services";

const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});
async function server(config: Record<string, unknown>): Promise<TestServer> {
  const s = await startServer({ config, hostname: "0.0.0.0" });
  servers.push(s);
  return s;
}
const bearer = { authorization: `Bearer ${TEST_TOKEN}` };

describe("per-token rate limit (real sockets)", () => {
  test("the request after the allowance is 429 with Retry-After; others keep their own allowance", async () => {
    const s = await server({ auth: { rateLimitPerMinute: 5, localhostBypass: true } });
    for (let i = 0; i < 5; i++) expect((await requestFrom("127.0.0.2", `${s.url}/recent`, { headers: bearer })).status).toBe(200);
    const over = await requestFrom("127.0.0.2", `${s.url}/recent`, { headers: bearer });
    expect(over.status).toBe(429);
    // 5 a minute refill one every 12 s.
    const retry = Number(over.headers["retry-after"]);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(12);
    expect(over.json().error).toMatchObject({ code: "rate_limited", retry_after: retry, message: expect.stringContaining("5 a minute") });
    // The same token from another address is the same caller.
    expect((await requestFrom("127.0.0.3", `${s.url}/recent`, { headers: bearer })).status).toBe(429);
    // Refused guesses count against their address, apart from the token's allowance, and end in 429 too.
    const guesses: number[] = [];
    for (let i = 0; i < 7; i++) guesses.push((await requestFrom("127.0.0.4", `${s.url}/recent`, { headers: { authorization: `Bearer guess-${i}` } })).status);
    expect(guesses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    // The localhost bypass (the machine's own user) and public /health are not limited.
    for (let i = 0; i < 8; i++) expect((await requestFrom("127.0.0.1", `${s.url}/recent`)).status).toBe(200);
    expect((await requestFrom("127.0.0.2", `${s.url}/health`)).status).toBe(200);
  });

  test("rateLimitPerMinute 0 turns the limit off", async () => {
    const s = await server({ auth: { rateLimitPerMinute: 0 } });
    for (let i = 0; i < 30; i++) expect((await requestFrom("127.0.0.2", `${s.url}/recent`, { headers: bearer })).status).toBe(200);
  });

  test("the default allows bursts far above a person or an agent", async () => {
    const s = await server({});
    expect(s.services.config.auth.rateLimitPerMinute).toBe(1200);
    const statuses = await Promise.all(
      Array.from({ length: 100 }, () => requestFrom("127.0.0.2", `${s.url}/health/llm`, { headers: bearer }).then((r) => r.status)),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
  });
});

describe("the bucket and its key", () => {
  test("refills at perMinute/60 a second and never above perMinute", () => {
    let now = 0;
    const l = new RateLimiter(60, () => now);
    for (let i = 0; i < 60; i++) expect(l.take("a").ok).toBe(true);
    expect(l.take("a")).toEqual({ ok: false, retryAfterSeconds: 1 });
    expect(l.take("b").ok).toBe(true);
    now += 1000;
    expect(l.take("a").ok).toBe(true);
    expect(l.take("a").ok).toBe(false);
    now += 3_600_000;
    for (let i = 0; i < 60; i++) expect(l.take("a").ok).toBe(true);
    expect(l.take("a").ok).toBe(false);
  });

  test("the key is the token (never in clear) or, for a refused request, the peer", () => {
    const k = rateKeyOf({ token: TEST_TOKEN, peer: "10.0.0.1" });
    expect(k).not.toContain(TEST_TOKEN);
    expect(k).toBe(rateKeyOf({ token: TEST_TOKEN, peer: "10.0.0.2" }));
    expect(rateKeyOf({ token: null, peer: "10.0.0.1" })).toBe("peer:10.0.0.1");
  });

  test("createApp takes another key function (per-member tokens swap it in)", async () => {
    const s = makeServices({ config: { auth: { rateLimitPerMinute: 2 } } });
    const seen: string[] = [];
    const app = createApp(s, [], { rateKeyOf: (who) => (seen.push(who.token ?? "-"), "everyone") });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await app.handle(new Request("http://localhost/recent", { headers: bearer }))).status);
      expect(statuses).toEqual([200, 200, 429]);
      expect(seen).toEqual([TEST_TOKEN, TEST_TOKEN, TEST_TOKEN]);
    } finally {
      await s.close();
    }
  });
});
