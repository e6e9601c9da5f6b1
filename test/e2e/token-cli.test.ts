import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createApp } from "../../src/http/app";
import { ROOT, BUN, childEnv, run } from "../helpers/process";
import { makeServices, type TestServices } from "../helpers/services";

/**
 * `memsvc token` and `memsvc audit` on the database itself (the bootstrap
 * path on PostgreSQL): the printed token authenticates a server over the
 * same database, `token list` never shows it, a revocation is refused at
 * the next request, and both show in `memsvc audit`.
 */
const MAIN = join(ROOT, "src", "main.ts");
let s: TestServices;
afterAll(async () => {
  await s?.close();
});

describe("memsvc token and memsvc audit", () => {
  test("create prints the token once; list hides it; revoke is immediate; audit shows both", async () => {
    s = makeServices();
    await s.storage.ready();
    const env = childEnv(s.config.home);
    const cli = (...args: string[]) => run([BUN, MAIN, ...args], env);
    const app = createApp(s);
    const recent = (token: string) => app.handle(new Request("http://localhost/recent", { headers: { authorization: `Bearer ${token}` } }));

    const made = await cli("token", "create", "--name", "ops", "--role", "admin", "--expires", "90d");
    expect(made.code).toBe(0);
    const token = made.stdout.trim();
    expect(token).toMatch(/^msv_[A-Za-z0-9_-]{43}$/);
    expect(made.stderr).toContain("shown only now");
    expect((await recent(token)).status).toBe(200);

    const listed = await cli("token", "list", "--json");
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(token.slice(4));
    const views = JSON.parse(listed.stdout);
    expect(views.find((v: any) => v.name === "ops")).toMatchObject({ role: "admin", state: "live", projects: null });

    const dup = await cli("token", "create", "--name", "ops");
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain("a token named ops exists");
    const badRole = await cli("token", "create", "--name", "x", "--role", "boss");
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toContain("role must be reader, writer or admin");
    const badExpiry = await cli("token", "create", "--name", "x", "--expires", "soon");
    expect(badExpiry.code).toBe(1);
    expect(badExpiry.stderr).toContain("expires must be a duration");

    const revoked = await cli("token", "revoke", "ops");
    expect(revoked.code).toBe(0);
    const refused = await recent(token);
    expect(refused.status).toBe(401);
    expect((await refused.json()).error.message).toContain("token ops was revoked");
    expect((await cli("token", "revoke", "ops")).code).toBe(1);

    const audit = await cli("audit", "--json", "--action", "token.");
    expect(audit.code).toBe(0);
    const actions = JSON.parse(audit.stdout).entries.map((e: any) => `${e.action} ${e.target} ${e.peer}`);
    expect(actions).toEqual(["token.revoked ops cli", "token.created ops cli"]);
    expect(audit.stdout).not.toContain(token);
  }, 60_000);
});
