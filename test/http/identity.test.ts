import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { requestFrom, startServer, type TestServer } from "../helpers/server";

let srv: TestServer;
let idDir: string;
beforeAll(async () => {
  srv = await startServer({ config: { identityAgents: { quiet: "off", plain: "global" }, identityClients: ["claude-code", "Codex"] } });
  idDir = srv.services.config.paths.identity;
});
afterAll(async () => {
  await srv.stop();
});

function put(path: string, body: unknown): Promise<Response> {
  return fetch(`${srv.url}${path}`, { method: "PUT", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
}
const files = (dir: string): string[] => (existsSync(dir) ? (readdirSync(dir, { recursive: true }) as string[]).sort() : []);

describe.each(["/identity", "/context"])("%s", (path) => {
  test("PUT writes a file and GET on either path returns it", async () => {
    const name = path === "/identity" ? "soul" : "style";
    const r = await put(path, { sections: { [name]: `# ${name}\nwritten via ${path}` } });
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body).toEqual({ ok: true, written: [name], updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(readFileSync(join(idDir, `${name}.md`), "utf8")).toBe(`# ${name}\nwritten via ${path}`);
    for (const other of ["/identity", "/context"]) {
      const g = await (await fetch(`${srv.url}${other}`)).json();
      expect(g.sections[name]).toBe(`# ${name}\nwritten via ${path}`);
      expect(g.clients).toEqual(["claude-code", "codex"]);
      expect(g.agents).toMatchObject({ plain: "global", quiet: "off" });
      expect(typeof g.sections.memory).toBe("string");
    }
  });

  test("errors: invalid name and reserved memory are 400 with nothing written, legacy query 400 names /recent", async () => {
    const before = files(idDir);
    const bad = await put(path, { sections: { soul: "changed", "Not/Valid": "x" } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ code: "invalid", invalid_names: ["Not/Valid"] });
    const mem = await put(path, { sections: { memory: "x" } });
    expect(mem.status).toBe(400);
    expect((await mem.json()).error.code).toBe("reserved");
    const malformed = await put(path, "{not json");
    expect(malformed.status).toBe(400);
    expect(files(idDir)).toEqual(before);
    expect(readFileSync(join(idDir, "soul.md"), "utf8")).not.toBe("changed");
    for (const q of ["project=x", "limit=3", "privacy=WORK"]) {
      const r = await fetch(`${srv.url}${path}?${q}`);
      expect(r.status).toBe(400);
      expect((await r.json()).error.message).toContain("/recent");
    }
  });

  test("agent scope: merged GET with origins, PUT to its folder, 409 when config forces the mode, 400 for a bad id", async () => {
    const agent = path === "/identity" ? "coder" : "reviewer";
    const fresh = await (await fetch(`${srv.url}${path}?agent=${agent}`)).json();
    expect(fresh).toMatchObject({ agent, mode: "global" });
    expect(fresh.origins).toBeUndefined();
    expect(fresh.agents).toBeUndefined();

    const w = await put(`${path}?agent=${agent}`, { sections: { tools: `${agent} tools` } });
    expect(w.status).toBe(200);
    expect(await w.json()).toMatchObject({ ok: true, written: ["tools"], agent, mode: "override" });
    expect(readFileSync(join(idDir, "agents", agent, "tools.md"), "utf8")).toBe(`${agent} tools`);

    const merged = await (await fetch(`${srv.url}${path}?agent=${agent}`)).json();
    expect(merged).toMatchObject({ agent, mode: "override", clients: ["claude-code", "codex"] });
    expect(merged.sections.tools).toBe(`${agent} tools`);
    expect(merged.origins.tools).toBe("agent");
    expect(merged.origins.soul).toBe("global");
    expect((await (await fetch(`${srv.url}${path}`)).json()).agents[agent]).toBe("override");

    for (const forced of ["quiet", "plain"]) {
      const r = await put(`${path}?agent=${forced}`, { sections: { soul: "x" } });
      expect(r.status).toBe(409);
      expect((await r.json()).error).toMatchObject({ code: "conflict", agent: forced });
      expect(existsSync(join(idDir, "agents", forced))).toBe(false);
    }
    const off = await (await fetch(`${srv.url}${path}?agent=quiet`)).json();
    expect(off).toMatchObject({ agent: "quiet", mode: "off", updated_at: null });
    expect(Object.keys(off.sections)).toEqual(["memory"]);

    for (const badId of ["Bad", "..%2F..%2Fetc", "", "a".repeat(65)]) {
      expect((await fetch(`${srv.url}${path}?agent=${badId}`)).status).toBe(400);
      expect((await put(`${path}?agent=${badId}`, { sections: { soul: "x" } })).status).toBe(400);
    }
    expect(files(join(idDir, "agents")).filter((f) => !f.startsWith("coder") && !f.startsWith("reviewer"))).toEqual([]);
  });

  test("DELETE is 405 and says deletion happens on the filesystem", async () => {
    const r = await fetch(`${srv.url}${path}`, { method: "DELETE" });
    expect(r.status).toBe(405);
    expect((await r.json()).error.message).toContain("filesystem");
  });
});

describe("auth and the page shell", () => {
  test("a remote peer needs the token for /identity, but not for the page shell and its assets", async () => {
    expect((await requestFrom("127.0.0.2", `${srv.url}/identity`)).status).toBe(401);
    expect((await requestFrom("127.0.0.2", `${srv.url}/context`, { method: "PUT", headers: { "content-type": "application/json" }, body: '{"sections":{"x":"y"}}' })).status).toBe(401);
    expect(existsSync(join(idDir, "x.md"))).toBe(false);
    const ok = await requestFrom("127.0.0.2", `${srv.url}/identity`, { headers: { authorization: `Bearer ${srv.token}` } });
    expect(ok.status).toBe(200);
    expect(ok.json().sections.soul).toBeDefined();

    const shell = await requestFrom("127.0.0.2", `${srv.url}/identity/ui`);
    expect(shell.status).toBe(200);
    expect(shell.headers["content-type"]).toContain("text/html");
    expect(shell.headers["content-security-policy"]).toContain("default-src 'self'");
    expect(shell.body).toContain("/assets/auth.js");
    expect(shell.body).not.toContain("soul"); // the shell holds no data
    for (const asset of ["app.js", "style.css"]) {
      const a = await requestFrom("127.0.0.2", `${srv.url}/assets/identity/${asset}`);
      expect(a.status).toBe(200);
    }
    expect((await fetch(`${srv.url}/assets/identity/..%2F..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${srv.url}/assets/identity/index.html`)).status).toBe(404);
  });

  test("the page and its assets make no external requests", async () => {
    for (const p of ["/identity/ui", "/assets/identity/app.js", "/assets/identity/style.css"]) {
      const text = await (await fetch(`${srv.url}${p}`)).text();
      expect(text).not.toMatch(/https?:\/\/(?!\/)/);
    }
  });
});
