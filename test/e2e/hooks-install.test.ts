import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { BUN, childEnv, freePort, ROOT, run, startProcess, tempHome, type Running } from "../helpers/process";

const MAIN = "src/main.ts";
const MAIN_ABS = resolve(ROOT, MAIN);
let server: Running | null = null;
afterEach(() => {
  server?.proc.kill("SIGKILL");
  server = null;
});

/** A user whose ~/.claude/settings.json already has their own settings and hooks. */
const USER_SETTINGS = {
  model: "opus",
  permissions: { allow: ["Bash(npm test:*)"] },
  hooks: {
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "/usr/local/bin/guard.sh" }] }],
    SessionStart: [{ matcher: "startup", hooks: [{ type: "command", command: "echo welcome back" }] }],
  },
};

function userWith(settings: unknown | null): { home: string; file: string; env: Record<string, string>; memsvcHome: string } {
  const home = tempHome();
  const file = join(home, ".claude", "settings.json");
  if (settings !== null) {
    mkdirSync(join(home, ".claude"), { recursive: true });
    writeFileSync(file, typeof settings === "string" ? settings : JSON.stringify(settings, null, 4));
  }
  const memsvcHome = join(home, "memsvc-home");
  return { home, file, memsvcHome, env: { ...childEnv(memsvcHome), HOME: home } };
}

const hooks = (args: string[], env: Record<string, string>) => run([BUN, MAIN, "hooks", ...args], env);
const backups = (home: string) => readdirSync(join(home, ".claude")).filter((f) => f.startsWith("settings.json.bak-"));

describe("memsvc hooks install / uninstall", () => {
  test("--dry-run shows the change and writes nothing; install merges, keeps the user's hooks, backs up 0600; a second run changes nothing", async () => {
    const u = userWith(USER_SETTINGS);
    const original = readFileSync(u.file, "utf8");

    const dry = await hooks(["install", "--dry-run"], u.env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("+ ");
    expect(dry.stdout).toContain("hook user-prompt");
    expect(dry.stdout).toContain("dry run: nothing was written");
    expect(readFileSync(u.file, "utf8")).toBe(original);
    expect(backups(u.home)).toEqual([]);

    const first = await hooks(["install"], u.env);
    expect(first.code).toBe(0);
    const settings = JSON.parse(readFileSync(u.file, "utf8"));
    expect(settings.model).toBe("opus");
    expect(settings.permissions).toEqual(USER_SETTINGS.permissions);
    expect(settings.hooks.PreToolUse).toEqual(USER_SETTINGS.hooks.PreToolUse);
    expect(settings.hooks.SessionStart[0]).toEqual(USER_SETTINGS.hooks.SessionStart[0]);
    const prefix = `MEMSVC_HOME=${u.memsvcHome} ${BUN} ${MAIN_ABS} hook`;
    expect(settings.hooks.SessionStart[1].hooks).toEqual([{ type: "command", command: `${prefix} session-start`, timeout: 5 }]);
    expect(settings.hooks.UserPromptSubmit).toEqual([{ hooks: [{ type: "command", command: `${prefix} user-prompt`, timeout: 2 }] }]);
    expect(settings.hooks.PreCompact).toEqual([{ matcher: "", hooks: [{ type: "command", command: `${prefix} pre-compact`, timeout: 5 }] }]);
    expect(settings.hooks.SessionEnd).toEqual([{ hooks: [{ type: "command", command: `${prefix} session-end`, timeout: 5 }] }]);
    const [backup] = backups(u.home);
    expect(readFileSync(join(u.home, ".claude", backup!), "utf8")).toBe(original);
    expect(statSync(join(u.home, ".claude", backup!)).mode & 0o777).toBe(0o600);

    const installed = readFileSync(u.file, "utf8");
    const second = await hooks(["install"], u.env);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("already installed");
    expect(readFileSync(u.file, "utf8")).toBe(installed);
    expect(backups(u.home).length).toBe(1);
  });

  test("the installed SessionStart command, run as Claude Code runs it (a shell, no MEMSVC_* in the environment), reaches the server", async () => {
    const u = userWith(null);
    expect((await hooks(["install"], u.env)).code).toBe(0);
    expect(statSync(u.file).mode & 0o777).toBe(0o600);
    const port = await freePort();
    server = await startProcess([BUN, MAIN, "server", "--port", String(port)], childEnv(u.memsvcHome), port);
    const put = await fetch(`${server.url}/identity`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ sections: { about: "Dana reviews every migration twice." } }) });
    expect(put.status).toBe(200);

    const command: string = JSON.parse(readFileSync(u.file, "utf8")).hooks.SessionStart[0].hooks[0].command;
    const env: Record<string, string> = { PATH: "/usr/bin:/bin", HOME: u.home };
    const p = Bun.spawn(["sh", "-c", command], { cwd: "/", env, stdin: new Blob([JSON.stringify({ session_id: "s1", cwd: "/work/shop" })]), stdout: "pipe" });
    const [code, out] = await Promise.all([p.exited, new Response(p.stdout).text()]);
    expect(code).toBe(0);
    expect(out).toContain("Dana reviews every migration twice.");
  });

  test("uninstall removes exactly memsvc's entries and leaves the user's; an older hand-pasted memsvc entry is replaced, not duplicated", async () => {
    const u = userWith(USER_SETTINGS);
    expect((await hooks(["install"], u.env)).code).toBe(0);
    const removed = await hooks(["uninstall"], u.env);
    expect(removed.code).toBe(0);
    expect(JSON.parse(readFileSync(u.file, "utf8"))).toEqual(USER_SETTINGS);
    expect(backups(u.home).length).toBe(2);
    const again = await hooks(["uninstall"], u.env);
    expect(again.stdout).toContain("no memsvc hooks");

    // What the README used to tell users to paste, next to the user's own prompt hook.
    const pasted = { hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: "~/bin/lint-prompt" }, { type: "command", command: "memsvc hook user-prompt", timeout: 2 }] }] } };
    const v = userWith(pasted);
    expect((await hooks(["install"], v.env)).code).toBe(0);
    const merged = JSON.parse(readFileSync(v.file, "utf8"));
    const commands = merged.hooks.UserPromptSubmit.flatMap((g: any) => g.hooks.map((h: any) => h.command));
    expect(commands.filter((c: string) => c.endsWith("hook user-prompt")).length).toBe(1);
    expect(commands).toContain("~/bin/lint-prompt");
    expect((await hooks(["uninstall"], v.env)).code).toBe(0);
    expect(JSON.parse(readFileSync(v.file, "utf8"))).toEqual({ hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: "~/bin/lint-prompt" }] }] } });
  });

  test("a settings file that is not valid JSON is left alone with a clear message", async () => {
    const u = userWith('{ "model": "opus", ');
    const r = await hooks(["install"], u.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("is not valid JSON");
    expect(readFileSync(u.file, "utf8")).toBe('{ "model": "opus", ');
    expect(backups(u.home)).toEqual([]);
    expect(existsSync(u.memsvcHome)).toBe(false);
    const usage = await hooks(["reinstall"], u.env);
    expect(usage.code).toBe(2);
  });
});
