import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, childEnv, freePort, run, startProcess, tempHome, type Running } from "../helpers/process";
import { onPostgres } from "../helpers/engine";

// Every command runs under umask 000, so a file gets 0600 / a folder 0700 only
// because memsvc set the mode itself, not because the user's umask was strict.
const MAIN = "src/main.ts";
const shell = (args: string[]) => ["sh", "-c", 'umask 000 && exec "$@"', "sh", BUN, MAIN, ...args];
const memsvc = (args: string[], env: Record<string, string>) => run(shell(args), env);
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8).padStart(3, "0");

let server: Running | null = null;
afterEach(() => {
  server?.proc.kill("SIGKILL");
  server = null;
});

async function startServer(home: string): Promise<{ url: string; env: Record<string, string> }> {
  const port = await freePort();
  const env = childEnv(home, { MEMSVC_URL: `http://127.0.0.1:${port}` });
  server = await startProcess(shell(["server", "--port", String(port)]), env, port);
  return { url: server.url, env };
}

async function stopServer(): Promise<void> {
  server!.proc.kill("SIGTERM");
  await server!.proc.exited;
  server = null;
}

describe("files memsvc writes are private whatever the umask", () => {
  test("init: home and identity/ 0700, config.json 0600; a loose home from an older release is tightened", async () => {
    const home = join(tempHome(), "home");
    const env = childEnv(home);
    expect((await memsvc(["init"], env)).code).toBe(0);
    expect(mode(home)).toBe("700");
    expect(mode(join(home, "identity"))).toBe("700");
    expect(mode(join(home, "config.json"))).toBe("600");

    chmodSync(home, 0o755);
    chmodSync(join(home, "config.json"), 0o644);
    expect((await memsvc(["init"], env)).code).toBe(0);
    expect(mode(home)).toBe("700");
    expect(mode(join(home, "config.json"))).toBe("600");
  });

  // SQLite only: on PostgreSQL the database's files are the database server's, not in the home.
  test.skipIf(onPostgres)("server start, ingest and identity PUT: database, WAL, SHM and identity files 0600, folders 0700", async () => {
    const home = join(tempHome(), "fresh-home");
    const { url } = await startServer(home);
    expect(mode(home)).toBe("700");
    const res = await fetch(`${url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "the build uses bun 1.4", type: "fact" }),
    });
    expect(res.status).toBe(201);
    for (const f of ["memsvc.db", "memsvc.db-wal", "memsvc.db-shm"]) expect([f, mode(join(home, f))]).toEqual([f, "600"]);

    const put = await fetch(`${url}/identity?agent=reviewer`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sections: { style: "terse" } }),
    });
    expect(put.status).toBe(200);
    const global = await fetch(`${url}/identity`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sections: { about: "a developer" } }),
    });
    expect(global.status).toBe(200);
    expect(mode(join(home, "identity", "about.md"))).toBe("600");
    expect(mode(join(home, "identity", "agents"))).toBe("700");
    expect(mode(join(home, "identity", "agents", "reviewer"))).toBe("700");
    expect(mode(join(home, "identity", "agents", "reviewer", "style.md"))).toBe("600");
    await stopServer();
  });

  test("export (new file and over a 0644 one), backup and import into a fresh home", async () => {
    const home = join(tempHome(), "home");
    const env = childEnv(home);
    await startServer(home);
    await fetch(`${server!.url}/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "deploys go through the staging host first", type: "fact" }),
    });
    await fetch(`${server!.url}/identity`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sections: { about: "a developer" } }),
    });
    await stopServer();

    const outDir = tempHome();
    chmodSync(outDir, 0o755);
    const exported = join(outDir, "export.jsonl");
    expect((await memsvc(["export", "--out", exported], env)).code).toBe(0);
    expect(mode(exported)).toBe("600");
    const existing = join(outDir, "existing.jsonl");
    writeFileSync(existing, "old\n", { mode: 0o644 });
    chmodSync(existing, 0o644);
    expect((await memsvc(["export", "--out", existing], env)).code).toBe(0);
    expect(mode(existing)).toBe("600");

    const backup = await memsvc(["backup"], env);
    expect(backup.code).toBe(0);
    const backups = join(home, "backups");
    expect(mode(backups)).toBe("700");
    const [file] = readdirSync(backups);
    expect(mode(join(backups, file!))).toBe("600");
    // A folder the user named is created private, but an existing one (like /tmp) is not touched.
    const named = join(outDir, "nested", "deeper", onPostgres ? "copy.jsonl" : "copy.db");
    expect((await memsvc(["backup", "--out", named], env)).code).toBe(0);
    expect([mode(join(outDir, "nested")), mode(join(outDir, "nested", "deeper")), mode(named)]).toEqual(["700", "700", "600"]);
    expect(mode(outDir)).toBe("755");

    const fresh = join(tempHome(), "imported-home");
    const imported = await memsvc(["import", exported], childEnv(fresh));
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain("imported 1 memory");
    expect(imported.stdout).toContain("1 identity section");
    if (onPostgres) {
      // The import wrote rows and sections into the database; whatever it made in the home is private.
      for (const f of existsSync(fresh) ? [fresh, ...readdirSync(fresh, { recursive: true }).map((e) => join(fresh, String(e)))] : []) {
        expect([f, mode(f)]).toEqual([f, statSync(f).isDirectory() ? "700" : "600"]);
      }
      return;
    }
    expect(mode(fresh)).toBe("700");
    for (const f of ["memsvc.db", "identity/about.md"]) expect([f, mode(join(fresh, f))]).toEqual([f, "600"]);
    for (const f of ["memsvc.db-wal", "memsvc.db-shm"]) if (existsSync(join(fresh, f))) expect([f, mode(join(fresh, f))]).toEqual([f, "600"]);
    expect(mode(join(fresh, "identity"))).toBe("700");
  });
});
