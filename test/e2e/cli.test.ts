import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { ingestMemory } from "../../src/core/ingest";
import { homeRows, onPostgres } from "../helpers/engine";
import { startFakeLlm } from "../helpers/fake-llm";
import { makeServices } from "../helpers/services";
import { checkHome } from "../helpers/integrity";
import { adminToken } from "../helpers/tokens";
import { BUN, childEnv, freePort, run, startProcess, tempHome, type Running } from "../helpers/process";

const MAIN = ["src/main.ts"];
const memsvc = (args: string[], env: Record<string, string>) => run([BUN, ...MAIN, ...args], env);
let server: Running | null = null;
afterEach(() => {
  server?.proc.kill("SIGKILL");
  server = null;
});

describe("help and version", () => {
  test("--version prints the package version; --help on every command", async () => {
    const env = childEnv(tempHome());
    const pkg = JSON.parse(readFileSync(join(import.meta.dir, "../../package.json"), "utf8"));
    expect((await memsvc(["--version"], env)).stdout.trim()).toBe(pkg.version);
    const help = await memsvc(["--help"], env);
    expect(help.code).toBe(0);
    for (const c of ["init", "server", "status"]) {
      expect(help.stdout).toContain(c);
      const r = await memsvc([c, "--help"], env);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`memsvc ${c}`);
    }
    const unknown = await memsvc(["frobnicate"], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    const badFlag = await memsvc(["server", "--prot", "1"], env);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(/prot/);
    const badPort = await memsvc(["server", "--port", "http"], env);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toMatch(/--port must be an integer/);
  });
});

describe("init", () => {
  test("writes config.json 0600 with a token and agentId; keeps the token unless --force", async () => {
    const home = tempHome();
    const env = childEnv(home);
    expect((await memsvc(["init"], env)).code).toBe(0);
    const file = join(home, "config.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const first = JSON.parse(readFileSync(file, "utf8"));
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(first.agentId).toMatch(/^[0-9a-f-]{36}$/);
    await memsvc(["init"], env);
    expect(JSON.parse(readFileSync(file, "utf8")).token).toBe(first.token);
    const forced = await memsvc(["init", "--force"], env);
    expect(forced.stdout).toMatch(/new bearer token/);
    const second = JSON.parse(readFileSync(file, "utf8"));
    expect(second.token).not.toBe(first.token);
    expect(second.agentId).toBe(first.agentId);
  });
});

describe("configuration errors stop start-up naming file and key", () => {
  for (const [content, key] of [
    ['{"port": "eighty"}', /"port"/],
    ['{"llm": {"baseURL": 5}}', /"llm.baseURL"/],
    ['{"prot": 1}', /unknown key "prot"/],
    ['{"identityAgents": {"bot": "sometimes"}}', /identityAgents.bot/],
    ["{not json", /not valid JSON/],
    ['{\n  "port": 8787\n  "host": "127.0.0.1"\n}', /config\.json: not valid JSON: line 3, column 3: expected ',' or '}'/],
  ] as [string, RegExp][]) {
    test(content, async () => {
      const home = tempHome();
      mkdirSync(home, { recursive: true });
      writeFileSync(join(home, "config.json"), content);
      const r = await memsvc(["server", "--port", "0"], childEnv(home));
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(join(home, "config.json"));
      expect(r.stderr).toMatch(key);
    });
  }
});

describe("status and server", () => {
  test("status exits 1 with a clear line when no server answers, and reports a running one", async () => {
    const home = tempHome();
    const port = await freePort();
    const env = childEnv(home, { MEMSVC_URL: `http://127.0.0.1:${port}` });
    const none = await memsvc(["status"], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no server answers at http:\/\/127\.0\.0\.1:\d+/);
    server = await startProcess([BUN, ...MAIN, "server", "--port", String(port)], env, port);
    const token = JSON.parse(readFileSync(join(home, "config.json"), "utf8")).token;
    const st = await memsvc(["status"], env);
    expect({ code: st.code, stderr: st.stderr }).toEqual({ code: 0, stderr: "" });
    expect(st.stdout).toMatch(/version:\s+\d+\.\d+\.\d+/);
    expect(st.stdout).toMatch(/memories:\s+0/);
    expect(st.stdout).toMatch(/llm:\s+not configured/);
    expect(st.stdout).toMatch(/embedder:\s+.*fallback/);
    expect(st.stdout).toContain(token);
    // The token never appears in the server's log.
    expect(server.stderr()).not.toContain(token);
  });

  test("binds 127.0.0.1 by default and refuses a port in use with a clear message", async () => {
    const home = tempHome();
    const port = await freePort();
    const env = childEnv(home);
    server = await startProcess([BUN, ...MAIN, "server", "--port", String(port)], env, port);
    expect(server.stderr()).toContain(`listening on http://127.0.0.1:${port}`);
    expect(server.stderr()).not.toContain("exposed to the network");
    const second = await memsvc(["server", "--port", String(port)], childEnv(tempHome()));
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/in use/);
  });

  test("a non-loopback bind warns at start: exposed, remote callers need the token, no TLS", async () => {
    const port = await freePort();
    server = await startProcess([BUN, ...MAIN, "server", "--port", String(port), "--host", "0.0.0.0"], childEnv(tempHome()), port);
    const warned = () =>
      server!
        .stderr()
        .split("\n")
        .find((l) => / warn +bound to 0\.0\.0\.0/.test(l));
    for (let i = 0; i < 100 && !warned(); i++) await Bun.sleep(20);
    expect(warned()).toMatch(/exposed to the network/);
    expect(warned()).toMatch(/need the bearer token/);
    const clear = () =>
      server!
        .stderr()
        .split("\n")
        .find((l) => / warn +no TLS:/.test(l));
    for (let i = 0; i < 100 && !clear(); i++) await Bun.sleep(20);
    expect(clear()).toMatch(/in clear.*tls\.cert and tls\.key.*tls\.proxy: true/);
  });

  test("a body declared far over the limit gets the one error shape from the real server (no bare 413 of Bun's own)", async () => {
    const port = await freePort();
    server = await startProcess([BUN, ...MAIN, "server", "--port", String(port)], childEnv(tempHome()), port);
    const answer = await new Promise<string>((resolve) => {
      const sock = connect(port, "127.0.0.1");
      const got: Buffer[] = [];
      sock.on("data", (d) => got.push(d as Buffer));
      sock.on("error", () => undefined);
      sock.on("close", () => resolve(Buffer.concat(got).toString("utf8")));
      sock.write(`POST /distill HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${30 * 1024 * 1024}\r\n\r\n{"text":"`);
      setTimeout(() => sock.destroy(), 5000);
    });
    expect(answer).toStartWith("HTTP/1.1 413");
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)).error).toEqual({
      code: "too_large",
      message: "request body is 31457280 bytes; the limit is 26214400 (25 MB)",
    });
  });

  test("SIGTERM during a burst of writes: acknowledged writes are kept and the store closes cleanly", async () => {
    const home = tempHome();
    const port = await freePort();
    server = await startProcess([BUN, ...MAIN, "server", "--port", String(port)], childEnv(home), port);
    const acked: string[] = [];
    let firstAck!: () => void;
    const acknowledged = new Promise<void>((r) => (firstAck = r));
    const burst = Array.from({ length: 60 }, async (_, i) => {
      try {
        const r = await fetch(`${server!.url}/ingest`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ content: `burst memory ${i} about topic ${i % 7}` }),
        });
        if (r.status === 201) {
          acked.push(((await r.json()) as { id: string }).id);
          firstAck();
        }
      } catch {
        /* refused after shutdown began */
      }
    });
    // SIGTERM once a write is acknowledged (not after a guessed sleep): the check below then has writes to check.
    await Promise.race([acknowledged, Promise.all(burst)]);
    server.proc.kill("SIGTERM");
    await Promise.all(burst);
    expect(acked.length).toBeGreaterThan(0);
    expect(await server.proc.exited).toBe(0);
    expect(server.stderr()).toContain("stopped cleanly");
    server = null;
    // Integrity, one vector and full-text entry per memory, no orphans (SQLite: also PRAGMA integrity_check and FTS5's).
    const check = await checkHome(home);
    expect(check.problems).toEqual([]);
    for (const id of acked) expect(check.ids.has(id)).toBe(true);
    // SQLite: a clean close checkpoints the WAL into the file. PostgreSQL keeps its own WAL: nothing in the home to check.
    if (!onPostgres) expect(statSync(join(home, "memsvc.db-wal"), { throwIfNoEntry: false })?.size ?? 0).toBe(0);
  });
});

describe("history", () => {
  test("lists a memory's earlier versions and restores one through the running server", async () => {
    const home = tempHome();
    const port = await freePort();
    const env = childEnv(home, { MEMSVC_URL: `http://127.0.0.1:${port}` });
    server = await startProcess([BUN, ...MAIN, "server", "--port", String(port)], env, port);
    // config.json's token on SQLite; on PostgreSQL an admin token of the database, written to config.json for the CLI.
    const token = await adminToken(home);
    // The CLI sends the token: the same server answers a remote-style client with it.
    const auth = { "content-type": "application/json", authorization: `Bearer ${token}` };
    const { id } = (await (
      await fetch(`${server.url}/ingest`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ content: "Releases are tagged from main.", project: "cli" }),
      })
    ).json()) as { id: string };
    await fetch(`${server.url}/memory`, {
      method: "PATCH",
      headers: auth,
      body: JSON.stringify({ id, content: "Releases are tagged from the release branch." }),
    });

    const list = await memsvc(["history", id.slice(0, 8)], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`memory ${id.slice(0, 8)} (${id}), current`);
    expect(list.stdout).toContain("    Releases are tagged from the release branch.");
    expect(list.stdout).toMatch(/version 1 {2}replaced \d{4}-\d\d-\d\dT\S+ by update {2}experience, project cli\n {4}Releases are tagged from main\./);

    const restored = await memsvc(["history", id.slice(0, 8), "--restore", "1"], env);
    expect(restored.code).toBe(0);
    expect(restored.stdout).toContain(`restored version 1 of memory ${id.slice(0, 8)}`);
    const now = (await (await fetch(`${server.url}/memory?id=${id}`, { headers: auth })).json()) as { memory: { content: string } };
    expect(now.memory.content).toBe("Releases are tagged from main.");
    const json = JSON.parse((await memsvc(["history", id, "--json"], env)).stdout);
    expect(json.versions.map((v: { version: number; reason: string }) => [v.version, v.reason])).toEqual([
      [2, "restore"],
      [1, "update"],
    ]);

    const missing = await memsvc(["history", id.slice(0, 8), "--restore", "7"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("has no version 7");
    expect((await memsvc(["history"], env)).code).toBe(2);
    expect((await memsvc(["history", id, "--restore", "one"], env)).stderr).toContain("--restore takes a version number");
  }, 60_000);
});

describe("nightly", () => {
  test("two `memsvc nightly` processes for one day at once: one consolidates, the other finds it in progress (the shared lease)", async () => {
    const llm = startFakeLlm();
    try {
      const s = makeServices({ config: { llm: { baseURL: llm.baseURL, model: "fake-model", timeoutMs: 20_000 } } });
      const home = s.config.home;
      const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      expect(
        (await ingestMemory(s, { content: "The deploy failed because the migration locked the orders table.", project: "shop", session_date: day })).id,
      ).not.toBeNull();
      await s.close();
      // The model answers slowly, so the first run still holds the day's lease when the second asks for it.
      llm.fallback = () => ({
        json: { learnings: [{ content: "Run migrations with a lock timeout: the orders table locked and the deploy failed.", sources: [1] }] },
        delayMs: 4000,
      });
      const env = childEnv(home);
      const [a, b] = await Promise.all([memsvc(["nightly", "--day", day], env), memsvc(["nightly", "--day", day], env)]);
      const runs = [a, b].sort((x, y) => x.code - y.code);
      expect(runs.map((r) => r.code)).toEqual([0, 1]);
      expect(runs[0].stdout).toContain(`nightly ${day} done: read 1/1 memory, wrote 1 learning`);
      expect(runs[1].stdout).toContain(`a nightly run for ${day} is in progress`);
      expect(llm.requests.length).toBe(1);
      expect(await homeRows(home, "SELECT day, status FROM nightly_runs")).toEqual([{ day, status: "done" }]);
    } finally {
      llm.stop();
    }
  }, 60_000);
});
