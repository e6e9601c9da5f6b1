import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { requestFrom, startServer, type TestServer } from "../helpers/server";
import { createApp } from "../../src/http/app";
import { VERSION } from "../../src/version";

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv.stop();
});

// What a browser's address bar sends.
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
const peers = [
  ["loopback (the bypass)", "127.0.0.1"],
  ["a remote peer without a token", "127.0.0.2"],
] as const;

describe("GET /", () => {
  for (const [who, address] of peers) {
    test(`a browser is redirected to the memory browser: ${who}`, async () => {
      const r = await requestFrom(address, `${srv.url}/`, { headers: { accept: BROWSER_ACCEPT } });
      expect(r.status).toBe(303);
      expect(r.headers.location).toBe("/memories");
      // The target is a public page shell: the redirect does not end at a 401.
      const page = await requestFrom(address, `${srv.url}${r.headers.location}`, { headers: { accept: BROWSER_ACCEPT } });
      expect(page.status).toBe(200);
      expect(page.headers["content-type"]).toContain("text/html");
    });

    test(`other clients get a JSON index of the pages and /health: ${who}`, async () => {
      for (const headers of [{}, { accept: "application/json" }, { accept: "*/*" }] as Record<string, string>[]) {
        const r = await requestFrom(address, `${srv.url}/`, { headers });
        expect(r.status).toBe(200);
        expect(r.headers["content-type"]).toContain("application/json");
        const j = r.json();
        expect(j).toMatchObject({
          service: "memsvc",
          version: VERSION,
          health: "/health",
          pages: { memories: "/memories", graph: "/viz", identity: "/identity/ui", dashboard: "/dashboard" },
        });
        // Every page it names answers (public shells).
        for (const path of [...Object.values(j.pages as Record<string, string>), j.health])
          expect((await requestFrom(address, `${srv.url}${path}`)).status).toBe(200);
      }
    });
  }

  test("unknown paths keep the one error shape (404 from loopback, 401 from a remote peer without a token)", async () => {
    const local = await requestFrom("127.0.0.1", `${srv.url}/nope`, { headers: { accept: BROWSER_ACCEPT } });
    expect(local.status).toBe(404);
    expect(local.json()).toEqual({ error: { code: "not_found", message: "no route GET /nope" } });
    const remote = await requestFrom("127.0.0.2", `${srv.url}/nope`);
    expect(remote.status).toBe(401);
    expect(remote.json().error.code).toBe("unauthorized");
  });

  test("in-process (no peer address, which counts as remote): the same answers", async () => {
    const app = createApp(srv.services);
    const r = await app.handle(new Request("http://localhost/", { headers: { accept: BROWSER_ACCEPT } }));
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/memories");
    const j = await app.handle(new Request("http://localhost/"));
    expect(j.status).toBe(200);
    expect(((await j.json()) as { health: string }).health).toBe("/health");
  });
});
