import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { createServices } from "../../src/core/services";
import { createToken } from "../../src/core/tokens";
import { FallbackEmbedder } from "../../src/embed/fallback";
import { createApp } from "../../src/http/app";
import { openStorage } from "../../src/store/open";
import { engineConfig, onPostgres } from "../helpers/engine";
import { requestFrom, startServer, type TestServer } from "../helpers/server";

/**
 * Two servers over one database (on PostgreSQL the team topology: a server
 * per laptop, one database) agree on tokens at once: a token made through
 * one authenticates on the other, and a revocation through one is refused
 * by the other at its very next request (the database is read per request;
 * no cache to go stale).
 */
const servers: TestServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

const get = (s: TestServer, token: string, path: string) => requestFrom("127.0.0.2", `${s.url}${path}`, { headers: { authorization: `Bearer ${token}` } });

describe("two servers over one database", () => {
  test("a token created through one works on the other; revoked through the other, refused by both at once", async () => {
    const a = await startServer();
    servers.push(a);
    const b = await startServer({ home: a.services.config.home });
    servers.push(b);
    const { token: admin } = await createToken(a.services.storage.tokens, { name: "ops", role: "admin" }, Date.now());
    // Made over HTTP on server A by the admin.
    const made = await requestFrom("127.0.0.2", `${a.url}/tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "dana", role: "reader" }),
    });
    expect(made.status).toBe(201);
    const dana = made.json().token as string;
    expect(dana.startsWith("msv_")).toBe(true);
    expect((await get(a, dana, "/recent")).status).toBe(200);
    expect((await get(b, dana, "/recent")).status).toBe(200);
    // Listed on B without the secret or its hash.
    const listed = await get(b, admin, "/tokens");
    expect(listed.body).toContain('"dana"');
    expect(listed.body).not.toContain(dana);
    expect(listed.body).not.toContain(dana.slice(4, 20));
    // Revoked through B: A refuses the next request.
    expect((await requestFrom("127.0.0.2", `${b.url}/tokens/dana`, { method: "DELETE", headers: { authorization: `Bearer ${admin}` } })).status).toBe(200);
    expect((await get(a, dana, "/recent")).status).toBe(401);
    expect((await get(b, dana, "/recent")).status).toBe(401);
    // The name is free again; the revoked row stays listed.
    const again = await requestFrom("127.0.0.2", `${a.url}/tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "dana", role: "writer", projects: ["alpha"], expires: "30d" }),
    });
    expect(again.status).toBe(201);
    const states = (await get(a, admin, "/tokens"))
      .json()
      .tokens.filter((t: any) => t.name === "dana")
      .map((t: any) => t.state);
    expect(states.sort()).toEqual(["live", "revoked"]);
  });

  test("the config file's token is an admin on SQLite and authenticates nothing on PostgreSQL", async () => {
    // test/helpers/services.ts stores the tests' config token in the database on PostgreSQL; a token that is only in a config file:
    const home = mkdtempSync(join(tmpdir(), "memsvc-home-"));
    const only = "config-only-token-0123456789abcdef";
    writeFileSync(join(home, "config.json"), JSON.stringify({ token: only, ...engineConfig(home) }));
    const config = loadConfig({ MEMSVC_HOME: home, MEMSVC_OFFLINE: "1" });
    const services = createServices(config, openStorage(config), { embedder: new FallbackEmbedder(), log: () => {} });
    try {
      const app = createApp(services);
      const r = await app.handle(new Request("http://localhost/tokens", { headers: { authorization: `Bearer ${only}` } }));
      expect(r.status).toBe(onPostgres ? 401 : 200);
    } finally {
      await services.close();
    }
  });
});
