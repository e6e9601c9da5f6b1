import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import * as TOML from "smol-toml";
import { join, resolve } from "node:path";
import { adminToken } from "../helpers/tokens";
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
/** Backups of settings.json: under <memsvc home>/backups/wiring-<stamp>/<its absolute path> (since harness wiring; they used to sit beside it). */
const backups = (u: { memsvcHome: string; file: string }) => {
  const root = join(u.memsvcHome, "backups");
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((d) => d.startsWith("wiring-"))
    .map((d) => join(root, d, u.file))
    .filter((f) => existsSync(f));
};

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
    expect(backups(u)).toEqual([]);

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
    const [backup] = backups(u);
    expect(readFileSync(backup!, "utf8")).toBe(original);
    expect(statSync(backup!).mode & 0o777).toBe(0o600);

    const installed = readFileSync(u.file, "utf8");
    const second = await hooks(["install"], u.env);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("already installed");
    expect(readFileSync(u.file, "utf8")).toBe(installed);
    expect(backups(u).length).toBe(1);
  });

  test("the installed SessionStart command, run as Claude Code runs it (a shell, no MEMSVC_* in the environment), reaches the server", async () => {
    const u = userWith(null);
    expect((await hooks(["install"], u.env)).code).toBe(0);
    expect(statSync(u.file).mode & 0o777).toBe(0o600);
    const port = await freePort();
    server = await startProcess([BUN, MAIN, "server", "--port", String(port)], childEnv(u.memsvcHome), port);
    // Clients send the home's config token: on PostgreSQL it must be a database token (issue 36).
    await adminToken(u.memsvcHome);
    const put = await fetch(`${server.url}/identity`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sections: { about: "Dana reviews every migration twice." } }),
    });
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
    expect(backups(u).length).toBe(2);
    const again = await hooks(["uninstall"], u.env);
    expect(again.stdout).toContain("no memsvc hooks");

    // What the README used to tell users to paste, next to the user's own prompt hook.
    const pasted = {
      hooks: {
        UserPromptSubmit: [
          {
            hooks: [
              { type: "command", command: "~/bin/lint-prompt" },
              { type: "command", command: "memsvc hook user-prompt", timeout: 2 },
            ],
          },
        ],
      },
    };
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
    expect(backups(u)).toEqual([]);
    expect(existsSync(u.memsvcHome)).toBe(false);
    const usage = await hooks(["reinstall"], u.env);
    expect(usage.code).toBe(2);
  });
});

/** Every file under `dir` (relative path -> bytes), leaving out memsvc's home and Bun's own cache folder. */
function snapshot(dir: string, skip: string[]): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (skip.includes(p)) continue;
      if (e.isDirectory()) {
        out.set(`${p}/`, "");
        walk(p);
      } else out.set(p, readFileSync(p, "base64"));
    }
  };
  walk(dir);
  return out;
}

describe("memsvc hooks install / uninstall across harnesses", () => {
  test("a home with Claude Code, Codex, Gemini CLI and opencode: install wires all four (valid files, a chained notify that runs), uninstall leaves every file byte-identical and the created ones gone", async () => {
    const home = tempHome();
    const fixtures = resolve(ROOT, "test/fixtures");
    const put = (rel: string, text: string) => {
      mkdirSync(join(home, rel, ".."), { recursive: true });
      writeFileSync(join(home, rel), text);
    };
    // The user's own Codex notify: a script that records the arguments it gets.
    const record = join(home, "notified.txt");
    put("bin/notify.sh", `#!/bin/sh\nprintf '%s\\n' "$@" > '${record}'\n`);
    chmodSync(join(home, "bin/notify.sh"), 0o755);
    put(".claude/settings.json", readFileSync(join(fixtures, "claude-code/config/settings.json"), "utf8"));
    put(".claude.json", readFileSync(join(fixtures, "claude-code/config/claude.json"), "utf8"));
    put(
      ".codex/config.toml",
      readFileSync(join(fixtures, "codex/config/config.toml"), "utf8").replace('"/home/dana/bin/codex-notify.sh"', JSON.stringify(join(home, "bin/notify.sh"))),
    );
    put(".gemini/settings.json", readFileSync(join(fixtures, "gemini/config/settings.json"), "utf8"));
    put(".config/opencode/opencode.jsonc", readFileSync(join(fixtures, "opencode/config/opencode.jsonc"), "utf8"));
    const memsvcHome = join(home, "memsvc-home");
    const skip = [memsvcHome, join(home, ".bun")];
    const before = snapshot(home, skip);
    const env = { ...childEnv(memsvcHome), HOME: home, PATH: "/usr/bin:/bin" };

    const dry = await hooks(["install", "--dry-run"], env);
    expect(dry.code).toBe(0);
    expect(snapshot(home, skip)).toEqual(before);

    const installed = await hooks(["install"], env);
    expect(installed.stderr).toBe("");
    expect(installed.code).toBe(0);
    for (const id of ["claude-code", "codex", "gemini", "opencode"]) expect(installed.stdout).toContain(`wired ${id}`);
    expect(JSON.parse(readFileSync(join(home, ".claude.json"), "utf8")).mcpServers.memsvc.args).toEqual([MAIN_ABS, "mcp"]);
    const codexConfig = TOML.parse(readFileSync(join(home, ".codex/config.toml"), "utf8")) as any;
    expect(codexConfig.mcp_servers.memsvc).toEqual({ command: BUN, args: [MAIN_ABS, "mcp"], env: { MEMSVC_HOME: memsvcHome } });
    expect(existsSync(join(home, ".config/opencode/plugins/memsvc.js"))).toBe(true);
    expect(statSync(join(memsvcHome, "state/wiring.json")).mode & 0o777).toBe(0o600);

    // Codex runs notify with its JSON payload as the last argument: the user's own script still gets it, unchanged.
    const payload = JSON.stringify({ type: "agent-turn-complete", "thread-id": "t1", "last-assistant-message": "done" });
    const p = Bun.spawn([...codexConfig.notify, payload], { env: { PATH: "/usr/bin:/bin", HOME: home }, stdout: "ignore", stderr: "ignore" });
    expect(await p.exited).toBe(0);
    for (let i = 0; i < 200 && !existsSync(record); i++) await Bun.sleep(10);
    expect(readFileSync(record, "utf8")).toBe(`--sound\n${payload}\n`);
    rmSync(record);

    expect((await hooks(["install"], env)).stdout.match(/already installed/g)?.length).toBe(4);

    const removed = await hooks(["uninstall"], env);
    expect(removed.stderr).toBe("");
    expect(removed.code).toBe(0);
    expect(snapshot(home, skip)).toEqual(before);
    // Every backup memsvc took is private.
    const backupFiles = [...snapshot(join(memsvcHome, "backups"), []).keys()].filter((k) => !k.endsWith("/"));
    expect(backupFiles.length).toBeGreaterThanOrEqual(8);
    for (const f of backupFiles) expect(statSync(f).mode & 0o777).toBe(0o600);
  });

  test("memsvc hook <event> --harness gemini answers in Gemini CLI's JSON, with the identity when gemini-cli is listed", async () => {
    const u = userWith(null);
    mkdirSync(u.memsvcHome, { recursive: true });
    writeFileSync(join(u.memsvcHome, "config.json"), JSON.stringify({ identityClients: ["claude-code", "gemini-cli"] }));
    const port = await freePort();
    server = await startProcess([BUN, MAIN, "server", "--port", String(port)], childEnv(u.memsvcHome), port);
    // Clients send the home's config token: on PostgreSQL it must be a database token (issue 36).
    await adminToken(u.memsvcHome);
    const put = await fetch(`${server.url}/identity`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sections: { about: "Dana reviews every migration twice." } }),
    });
    expect(put.status).toBe(200);
    const hook = (event: string) =>
      Bun.spawn([BUN, MAIN, "hook", event, "--harness", "gemini"], {
        cwd: ROOT,
        env: u.env,
        stdin: new Blob([JSON.stringify({ session_id: "g1", cwd: "/work/shop", hook_event_name: "SessionStart", source: "startup" })]),
        stdout: "pipe",
      });
    const start = hook("session-start");
    const [code, out] = await Promise.all([start.exited, new Response(start.stdout).text()]);
    expect(code).toBe(0);
    const answer = JSON.parse(out);
    expect(answer.hookSpecificOutput.hookEventName).toBe("SessionStart");
    expect(answer.hookSpecificOutput.additionalContext).toContain("Dana reviews every migration twice.");
    // Events with nothing to add still print a JSON object: Gemini parses stdout as JSON.
    const end = hook("session-end");
    expect(JSON.parse(await new Response(end.stdout).text())).toEqual({});
  });
});
