import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readRuntimeFile } from "../../src/runtime-file";
import { BUN, childEnv, freePort, run, startProcess, tempHome, type Running } from "../helpers/process";

/**
 * `memsvc service` on this Linux container, from source, with a stand-in
 * `systemctl` first on PATH: it records its argv, keeps "enabled" state in a
 * file, and fails every call (as a container without a user systemd does:
 * "Failed to connect to bus") when told to.
 */
const STANDIN = `#!/bin/sh
printf '%s\\n' "$*" >> "$STANDIN_DIR/argv.log"
if [ -f "$STANDIN_DIR/fail" ]; then echo "Failed to connect to bus: No medium found" >&2; exit 1; fi
case "$*" in
  *"enable --now"*) touch "$STANDIN_DIR/active" ;;
  *"disable --now"*) rm -f "$STANDIN_DIR/active" ;;
  *is-active*) if [ -f "$STANDIN_DIR/active" ]; then echo active; exit 0; else echo inactive; exit 3; fi ;;
esac
exit 0
`;

const pids = new Set<number>();
const homes: string[] = [];
let handServer: Running | null = null;
afterAll(() => {
  handServer?.proc.kill("SIGKILL");
  for (const home of homes) {
    const pid = readRuntimeFile(home)?.pid;
    if (pid) pids.add(pid);
  }
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
});

async function setup(opts: { fail: boolean }) {
  const user = tempHome();
  const home = join(tempHome(), "memsvc home");
  homes.push(home);
  mkdirSync(home, { recursive: true });
  // A port of its own: a detached server must not race other tests for 8787.
  writeFileSync(join(home, "config.json"), JSON.stringify({ port: await freePort() }));
  const standinDir = join(user, "standin");
  mkdirSync(standinDir);
  writeFileSync(join(standinDir, "systemctl"), STANDIN);
  chmodSync(join(standinDir, "systemctl"), 0o755);
  if (opts.fail) writeFileSync(join(standinDir, "fail"), "");
  const env = childEnv(home, { HOME: user, PATH: `${standinDir}:${process.env.PATH}`, STANDIN_DIR: standinDir });
  delete env.XDG_CONFIG_HOME;
  const unit = join(user, ".config", "systemd", "user", "memsvc.service");
  const calls = () => (existsSync(join(standinDir, "argv.log")) ? readFileSync(join(standinDir, "argv.log"), "utf8").trim().split("\n") : []);
  const memsvc = (...args: string[]) => run([BUN, "src/main.ts", "service", ...args], env, undefined, 60_000);
  return { user, home, env, unit, calls, memsvc };
}

async function health(url: string): Promise<number> {
  return fetch(`${url}/health`).then(
    (r) => r.status,
    () => 0,
  );
}

describe("memsvc service with a working systemd", () => {
  test("dry run writes nothing; install writes the unit 0644 and enables it; again changes nothing; uninstall disables and removes it", async () => {
    const s = await setup({ fail: false });
    const dry = await s.memsvc("install", "--dry-run");
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`would write ${s.unit}`);
    expect(dry.stdout).toContain("would run: systemctl --user enable --now memsvc.service");
    expect(existsSync(s.unit)).toBe(false);
    expect(s.calls()).toEqual(["--user show-environment"]);

    const first = await s.memsvc("install");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`installed the systemd service (${s.unit})`);
    // 0644: systemd warns about a unit others cannot read, and it holds no secrets.
    expect(statSync(s.unit).mode & 0o777).toBe(0o644);
    const unit = readFileSync(s.unit, "utf8");
    expect(unit).toContain(`ExecStart=${BUN} ${join(import.meta.dir, "../../src/main.ts")} server --service`);
    expect(unit).toContain(`Environment="MEMSVC_HOME=${s.home}"`);
    expect(s.calls().slice(1)).toEqual(["--user show-environment", "--user daemon-reload", "--user enable --now memsvc.service"]);
    // The stand-in starts nothing: install says so instead of claiming a server.
    expect(first.stdout).toMatch(/no server answered within 5 s/);
    expect(readRuntimeFile(s.home)).toBeNull();

    const mtime = statSync(s.unit).mtimeMs;
    const again = await s.memsvc("install");
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/already installed .* and active; nothing changed/);
    expect(statSync(s.unit).mtimeMs).toBe(mtime);
    expect(s.calls().slice(4)).toEqual(["--user show-environment", "--user is-active memsvc.service"]);

    const gone = await s.memsvc("uninstall");
    expect(gone.code).toBe(0);
    expect(gone.stdout).toContain(`removed ${s.unit}`);
    expect(existsSync(s.unit)).toBe(false);
    expect(s.calls().slice(6)).toEqual(["--user show-environment", "--user disable --now memsvc.service", "--user daemon-reload"]);
    expect(existsSync(join(s.home, "config.json"))).toBe(true);
  }, 60_000);
});

describe("memsvc service without a usable systemd (a container)", () => {
  test("writes the unit anyway, starts the server detached, changes nothing the second time, and uninstall stops it", async () => {
    const s = await setup({ fail: true });
    const first = await s.memsvc("install");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("systemd is not usable here");
    expect(first.stdout).toContain("Failed to connect to bus");
    expect(first.stdout).toContain(`wrote ${s.unit} anyway`);
    expect(first.stdout).toContain("Started the server detached");
    expect(existsSync(s.unit)).toBe(true);
    // Only the probe ran: nothing was asked of a manager that is not there.
    expect(s.calls()).toEqual(["--user show-environment"]);
    const info = readRuntimeFile(s.home)!;
    expect(info).not.toBeNull();
    pids.add(info.pid);
    expect(first.stdout).toContain(`${info.url} (pid ${info.pid})`);
    expect(await health(info.url)).toBe(200);
    const log = join(s.home, "logs", "server.log");
    expect(statSync(log).mode & 0o777).toBe(0o600);
    expect(readFileSync(log, "utf8")).toContain("listening on");

    const again = await s.memsvc("install");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`already runs (pid ${info.pid}, ${info.url}); not starting another; nothing changed`);
    expect(readRuntimeFile(s.home)?.pid).toBe(info.pid);

    const status = await s.memsvc("status");
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`installed: ${s.unit}`);
    expect(status.stdout).toContain("started detached by `memsvc service install`");

    const gone = await s.memsvc("uninstall");
    expect(gone.code).toBe(0);
    expect(gone.stdout).toContain(`stopped the server it started (pid ${info.pid})`);
    expect(existsSync(s.unit)).toBe(false);
    expect(await health(info.url)).toBe(0);
    expect(readRuntimeFile(s.home)).toBeNull();
    // The home and its data stay.
    expect(existsSync(join(s.home, "config.json"))).toBe(true);
    expect(existsSync(join(s.home, "logs", "server.log"))).toBe(true);
    const after = await s.memsvc("status");
    expect(after.code).toBe(1);
    expect(after.stdout).toContain("not installed");
  }, 90_000);

  test("a server started by hand is left alone: install does not start another, uninstall does not stop it", async () => {
    const s = await setup({ fail: true });
    const port = JSON.parse(readFileSync(join(s.home, "config.json"), "utf8")).port;
    handServer = await startProcess([BUN, "src/main.ts", "server"], s.env, port);
    const r = await s.memsvc("install");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`already runs (pid ${handServer.proc.pid}`);
    expect(r.stdout).toContain("not starting another");
    const gone = await s.memsvc("uninstall");
    expect(gone.stdout).toContain("keeps running");
    expect(await health(handServer.url)).toBe(200);
    expect(readRuntimeFile(s.home)?.pid).toBe(handServer.proc.pid);
  }, 60_000);
});

describe("memsvc service usage", () => {
  test("a missing or unknown action is a usage error", async () => {
    const s = await setup({ fail: true });
    expect((await s.memsvc()).code).toBe(2);
    const bad = await s.memsvc("restart");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown action "restart"');
    const help = await s.memsvc("--help");
    expect(help.stdout).toContain("memsvc service install");
  });
});
