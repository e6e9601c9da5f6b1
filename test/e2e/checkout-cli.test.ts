import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { onPostgres } from "../helpers/engine";
import { childEnv, freePort, ROOT, run, startProcess, tempHome } from "../helpers/process";

// The `memsvc` command of a checkout after `npm install`: `npx memsvc` in it,
// and the global command `npm link` makes. Bun is then only in node_modules,
// not on PATH: the children here get a PATH with every Bun taken out.

const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
const npm = Bun.which("npm");
const npx = Bun.which("npx");
// PostgreSQL run: the launcher touches no store; the SQLite run covers it.
const skip = onPostgres || !npm || !npx;

const PATH_WITHOUT_BUN = (process.env.PATH ?? "/usr/bin:/bin")
  .split(delimiter)
  .filter((dir) => dir && !existsSync(join(dir, "bun")) && !existsSync(join(dir, "bun.exe")))
  .join(delimiter);

const temps: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

/** npm's own state (cache, npx's installs, the global prefix) in temp folders, offline: the test leaves nothing in ~/.npm and fetches nothing. */
function npmEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: PATH_WITHOUT_BUN,
    HOME: tempDir("memsvc-npm-home-"),
    npm_config_cache: tempDir("memsvc-npm-cache-"),
    npm_config_offline: "true",
    npm_config_update_notifier: "false",
    npm_config_audit: "false",
    npm_config_fund: "false",
    ...extra,
  };
}

test.skipIf(skip)("the children's PATH really has no Bun", () => {
  expect(Bun.which("bun", { PATH: PATH_WITHOUT_BUN })).toBeNull();
  expect(Bun.which("node", { PATH: PATH_WITHOUT_BUN })).not.toBeNull();
});

test.skipIf(skip)(
  "npx memsvc --version in the checkout prints the version, with Bun only in node_modules",
  async () => {
    const r = await run([npx!, "memsvc", "--version"], npmEnv(), ROOT, 60_000);
    expect(r.stdout.trim()).toBe(VERSION);
    expect(r.code).toBe(0);
  },
  60_000,
);

test.skipIf(skip)(
  "npm link makes a global memsvc that runs without Bun on PATH, passes exit codes through and stops its server on SIGTERM",
  async () => {
    const prefix = tempDir("memsvc-npm-prefix-");
    const link = await run([npm!, "link"], npmEnv({ npm_config_prefix: prefix }), ROOT, 60_000);
    expect(link.code).toBe(0);
    const memsvc = join(prefix, "bin", "memsvc");
    expect(readlinkSync(memsvc)).toEndWith(join("memsvc", "bin", "memsvc.js"));

    const env = { PATH: `${join(prefix, "bin")}${delimiter}${PATH_WITHOUT_BUN}`, HOME: tempDir("memsvc-home-") };
    const cwd = tempDir("memsvc-elsewhere-");
    const version = await run(["memsvc", "--version"], env, cwd);
    expect(version.stderr).toBe("");
    expect(version.stdout.trim()).toBe(VERSION);
    const unknown = await run(["memsvc", "frobnicate"], env, cwd);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');

    // A service manager stops the command it started, the launcher: the server behind it must stop cleanly too.
    const home = tempHome();
    const serverEnv = { ...childEnv(home), PATH: env.PATH };
    expect((await run([memsvc, "init"], serverEnv, cwd)).code).toBe(0);
    const port = await freePort();
    const server = await startProcess([memsvc, "server", "--port", String(port)], serverEnv, port, cwd);
    server.proc.kill("SIGTERM");
    expect(await server.proc.exited).toBe(0);
    expect(server.stderr()).toContain("stopped cleanly");
    await expect(fetch(`${server.url}/health`)).rejects.toThrow();
  },
  90_000,
);
