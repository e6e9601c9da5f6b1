import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { dbRow, dbRows, onSqlite } from "../helpers/engine";
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
  return fetch(`${srv.url}${path}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}
const files = (dir: string): string[] => (existsSync(dir) ? (readdirSync(dir, { recursive: true }) as string[]).sort() : []);

// Where sections are stored: the identity folder on SQLite, identity_sections on PostgreSQL.
async function stored(name: string, agent?: string): Promise<string | undefined> {
  if (onSqlite) {
    const file = agent ? join(idDir, "agents", agent, `${name}.md`) : join(idDir, `${name}.md`);
    return existsSync(file) ? readFileSync(file, "utf8") : undefined;
  }
  return (await dbRow<{ body: string }>(srv.services, "SELECT body FROM identity_sections WHERE scope = ? AND name = ?", [agent ?? "", name]))?.body;
}
/** Everything stored, to compare before and after a request that must write nothing. */
async function everything(): Promise<string[]> {
  if (onSqlite) return files(idDir).map((f) => (f.endsWith(".md") ? `${f}:${readFileSync(join(idDir, f), "utf8")}` : f));
  return (
    await dbRows<{ scope: string; name: string; body: string }>(srv.services, "SELECT scope, name, body FROM identity_sections ORDER BY scope, name")
  ).map((r) => `${r.scope}/${r.name}:${r.body}`);
}
/** Agents with a scope of their own (folders under agents/, or rows in identity_sections). */
async function agentScopes(): Promise<string[]> {
  if (onSqlite) return existsSync(join(idDir, "agents")) ? readdirSync(join(idDir, "agents")).sort() : [];
  return (await dbRows<{ scope: string }>(srv.services, "SELECT DISTINCT scope FROM identity_sections WHERE scope <> '' ORDER BY scope")).map((r) => r.scope);
}

describe.each(["/identity", "/context"])("%s", (path) => {
  test("PUT writes a file and GET on either path returns it", async () => {
    const name = path === "/identity" ? "soul" : "style";
    const r = await put(path, { sections: { [name]: `# ${name}\nwritten via ${path}` } });
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body).toEqual({ ok: true, written: [name], updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(await stored(name)).toBe(`# ${name}\nwritten via ${path}`);
    for (const other of ["/identity", "/context"]) {
      const g = await (await fetch(`${srv.url}${other}`)).json();
      expect(g.sections[name]).toBe(`# ${name}\nwritten via ${path}`);
      expect(g.clients).toEqual(["claude-code", "codex"]);
      expect(g.agents).toMatchObject({ plain: "global", quiet: "off" });
      expect(typeof g.sections.memory).toBe("string");
    }
  });

  test("errors: invalid name and reserved memory are 400 with nothing written, legacy query 400 names /recent", async () => {
    const before = await everything();
    const bad = await put(path, { sections: { soul: "changed", "Not/Valid": "x" } });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({ code: "invalid", invalid_names: ["Not/Valid"] });
    const mem = await put(path, { sections: { memory: "x" } });
    expect(mem.status).toBe(400);
    expect((await mem.json()).error.code).toBe("reserved");
    const malformed = await put(path, "{not json");
    expect(malformed.status).toBe(400);
    expect(await everything()).toEqual(before);
    expect(await stored("soul")).not.toBe("changed");
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
    expect(await stored("tools", agent)).toBe(`${agent} tools`);

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
      expect(await agentScopes()).not.toContain(forced);
    }
    const off = await (await fetch(`${srv.url}${path}?agent=quiet`)).json();
    expect(off).toMatchObject({ agent: "quiet", mode: "off", updated_at: null });
    expect(Object.keys(off.sections)).toEqual(["memory"]);

    for (const badId of ["Bad", "..%2F..%2Fetc", "", "a".repeat(65)]) {
      expect((await fetch(`${srv.url}${path}?agent=${badId}`)).status).toBe(400);
      expect((await put(`${path}?agent=${badId}`, { sections: { soul: "x" } })).status).toBe(400);
    }
    expect((await agentScopes()).filter((f) => !f.startsWith("coder") && !f.startsWith("reviewer"))).toEqual([]);
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
    expect(
      (await requestFrom("127.0.0.2", `${srv.url}/context`, { method: "PUT", headers: { "content-type": "application/json" }, body: '{"sections":{"x":"y"}}' }))
        .status,
    ).toBe(401);
    expect(await stored("x")).toBeUndefined();
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

describe("several servers over one store", () => {
  test("a section PUT through one server is what another server reads (PostgreSQL: each server has its own home)", async () => {
    // SQLite: one store is one home's file and folder. PostgreSQL: a second home, the same schema.
    const other = onSqlite
      ? await startServer({ home: srv.services.config.home })
      : await startServer({ env: { MEMSVC_DATABASE_SCHEMA: srv.services.config.database.schema } });
    try {
      if (!onSqlite) expect(other.services.config.home).not.toBe(srv.services.config.home);
      expect((await put("/identity?agent=shared", { sections: { habits: "written on server A" } })).status).toBe(200);
      const seen = await (await fetch(`${other.url}/identity?agent=shared`)).json();
      expect(seen).toMatchObject({ agent: "shared", mode: "override", origins: { habits: "agent" } });
      expect(seen.sections.habits).toBe("written on server A");
      const back = await fetch(`${other.url}/identity`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ sections: { habits: "edited on server B" } }),
      });
      expect(back.status).toBe(200);
      expect((await (await fetch(`${srv.url}/identity`)).json()).sections.habits).toBe("edited on server B");
    } finally {
      await other.stop();
    }
  });
});
