import { describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { planService } from "../../../src/setup/service";
import { platformPlan, serviceContext } from "../../../src/setup/service-plan";
import { systemdExecWord } from "../../../src/setup/service-systemd";
import { TR_MAX, windowsArg, windowsCommandLine } from "../../../src/setup/service-windows";

/**
 * Expectations written from the managers' own documentation:
 * - launchd.plist(5) (Apple's man page, also in Apple's open-source launchd
 *   tree): Label, ProgramArguments, EnvironmentVariables, RunAtLoad,
 *   KeepAlive { SuccessfulExit }, WorkingDirectory, StandardOutPath,
 *   StandardErrorPath; the plist DTD "-//Apple//DTD PLIST 1.0//EN".
 * - systemd.service(5) "Command lines" (quoting, C escapes, "$$" for a
 *   literal dollar) and systemd.unit(5) "Specifiers" ("%%" for a literal %).
 * - Microsoft's "schtasks create" page (/SC ONLOGON, /TN, /TR of at most 261
 *   characters, /RL LIMITED, /F) and its parsing of quotes in /TR as the C
 *   runtime does (CommandLineToArgvW: \" is a literal quote).
 */

const python = Bun.which("python3");
const systemdAnalyze = Bun.which("systemd-analyze");

function parsePlist(xml: string): any {
  const r = Bun.spawnSync([python!, "-c", "import json,plistlib,sys; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))"], {
    stdin: new TextEncoder().encode(xml),
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`plistlib refused the plist: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString());
}

describe("launchd LaunchAgent", () => {
  const home = "/Users/Ann Lee/mem & <data>";
  const plan = planService({
    command: ["/Users/Ann Lee/bin/memsvc"],
    home,
    env: { HOME: "/Users/Ann Lee", MEMSVC_OFFLINE: "1", MEMSVC_LLM_API_KEY: "sk-do-not-copy", MEMSVC_DATABASE_URL: "postgres://u:pw@h/db" },
    platform: "darwin",
  });

  test("goes to ~/Library/LaunchAgents; a plan for another OS is never available", () => {
    expect(plan.manager).toBe("launchd");
    expect(plan.file).toBe("/Users/Ann Lee/Library/LaunchAgents/dev.memsvc.server.plist");
    expect(plan.available).toBe(process.platform === "darwin" ? plan.available : false);
    expect(plan.content).toStartWith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN"');
    expect(plan.content).not.toContain("sk-do-not-copy");
    expect(plan.content).not.toContain("pw@h");
  });

  test.skipIf(!python)("parses as a property list with the documented keys", () => {
    expect(parsePlist(plan.content)).toEqual({
      Label: "dev.memsvc.server",
      ProgramArguments: ["/Users/Ann Lee/bin/memsvc", "server", "--service"],
      EnvironmentVariables: { MEMSVC_HOME: home, MEMSVC_OFFLINE: "1" },
      WorkingDirectory: home,
      RunAtLoad: true,
      KeepAlive: { SuccessfulExit: false },
      ProcessType: "Background",
      StandardOutPath: `${home}/logs/server.log`,
      StandardErrorPath: `${home}/logs/server.log`,
    });
  });

  test("a control character cannot be written into the plist", () => {
    expect(() => planService({ command: ["/bin/memsvc"], home: "/Users/a/\u0001", env: { HOME: "/Users/a" }, platform: "darwin" })).toThrow(
      /control character/,
    );
  });

  test("launchctl bootstrap gui/<uid>, falling back to load -w", () => {
    const ctx = serviceContext({ command: ["/usr/local/bin/memsvc"], home: "/Users/a/.memsvc", env: { HOME: "/Users/a" } }, "darwin");
    const detail = platformPlan(ctx, "darwin", true);
    expect(detail.commands).toEqual([
      {
        argv: ["launchctl", "bootstrap", `gui/${ctx.uid}`, "/Users/a/Library/LaunchAgents/dev.memsvc.server.plist"],
        fallback: ["launchctl", "load", "-w", "/Users/a/Library/LaunchAgents/dev.memsvc.server.plist"],
      },
    ]);
    expect(detail.removeCommands[0]!.argv).toEqual(["launchctl", "bootout", `gui/${ctx.uid}/dev.memsvc.server`]);
  });
});

describe("systemd user unit", () => {
  const plan = planService({
    command: ["/opt/my tools/bun", "/home/u/src 100%/main.ts"],
    home: '/home/u/mem $x "q"',
    env: { HOME: "/home/u", XDG_CONFIG_HOME: "/home/u/cfg", MEMSVC_LLM_API_KEY: "sk-do-not-copy" },
    platform: "linux",
  });
  const lines = plan.content.split("\n");

  test("in $XDG_CONFIG_HOME/systemd/user, with the documented quoting and escapes", () => {
    expect(plan.manager).toBe("systemd");
    expect(plan.file).toBe("/home/u/cfg/systemd/user/memsvc.service");
    expect(lines).toContain('ExecStart="/opt/my tools/bun" "/home/u/src 100%%/main.ts" server --service');
    expect(lines).toContain('Environment="MEMSVC_HOME=/home/u/mem $x \\"q\\""');
    expect(lines).toContain("Restart=on-failure");
    expect(lines).toContain("WantedBy=default.target");
    expect(plan.content).not.toContain("sk-do-not-copy");
    expect(systemdExecWord("a$b\\c")).toBe('"a$$b\\\\c"');
    expect(systemdExecWord("plain/word-1.ts")).toBe("plain/word-1.ts");
  });

  test("a relative XDG_CONFIG_HOME is ignored (XDG base directory spec); a line break is refused", () => {
    expect(planService({ command: ["/bin/memsvc"], home: "/h/.memsvc", env: { HOME: "/h", XDG_CONFIG_HOME: "cfg" }, platform: "linux" }).file).toBe(
      "/h/.config/systemd/user/memsvc.service",
    );
    expect(() => planService({ command: ["/bin/memsvc"], home: "/h/a\nExecStartPre=/bin/evil", env: { HOME: "/h" }, platform: "linux" })).toThrow(/line break/);
  });

  test("a relative command is refused", () => {
    expect(() => planService({ command: ["memsvc"], home: "/h/.memsvc", env: { HOME: "/h" }, platform: "linux" })).toThrow(/absolute path/);
  });

  test.skipIf(!systemdAnalyze)("systemd-analyze verify accepts the unit and finds the program at a path with spaces and %", () => {
    const dir = mkdtempSync(join(tmpdir(), "unit-"));
    const bin = join(dir, "my tools 100%", "memsvc");
    mkdirSync(join(dir, "my tools 100%"));
    copyFileSync("/bin/true", bin);
    chmodSync(bin, 0o755);
    const unit = planService({ command: [bin], home: join(dir, "home $1"), env: { HOME: dir }, platform: "linux" }).content;
    const verify = (text: string) => {
      const file = join(dir, "memsvc.service");
      writeFileSync(file, text);
      const r = Bun.spawnSync([systemdAnalyze!, "verify", file], { stdout: "pipe", stderr: "pipe" });
      return { code: r.exitCode, out: `${r.stdout}${r.stderr}` };
    };
    const ok = verify(unit);
    expect(ok.out).not.toMatch(/memsvc\.service/);
    expect(ok.code).toBe(0);
    // The control: the same unit without the quoting is refused, so the check above can fail.
    const bad = verify(unit.replace(/^ExecStart=.*$/m, `ExecStart=${bin} server --service`));
    expect(bad.out).toMatch(/not executable|No such file/);
  });
});

/** The C runtime's reading of a command line (CommandLineToArgvW rules), to check windowsArg against. */
function parseWindowsCommandLine(line: string): string[] {
  const args: string[] = [];
  let cur = "";
  let inQuotes = false;
  let started = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "\\") {
      let n = 0;
      while (line[i + n] === "\\") n++;
      if (line[i + n] === '"') {
        cur += "\\".repeat(Math.floor(n / 2));
        if (n % 2 === 1) cur += '"';
        else inQuotes = !inQuotes;
        i += n;
      } else {
        cur += "\\".repeat(n);
        i += n - 1;
      }
      started = true;
    } else if (c === '"') {
      inQuotes = !inQuotes;
      started = true;
    } else if ((c === " " || c === "\t") && !inQuotes) {
      if (started) args.push(cur);
      cur = "";
      started = false;
    } else {
      cur += c;
      started = true;
    }
  }
  if (started) args.push(cur);
  return args;
}

describe("Windows logon task", () => {
  const env = { USERPROFILE: "C:\\Users\\Ann Lee", LOCALAPPDATA: "C:\\Users\\Ann Lee\\AppData\\Local", APPDATA: "C:\\Users\\Ann Lee\\AppData\\Roaming" };
  const ctx = serviceContext({ command: ["C:\\Program Files\\memsvc\\memsvc.exe"], home: "C:\\Users\\Ann Lee\\.memsvc", env }, "win32");
  const launcher = "C:\\Users\\Ann Lee\\AppData\\Local\\memsvc\\memsvc-server.vbs";

  test("schtasks /Create /SC ONLOGON with /TR quoting the launcher's path", () => {
    const detail = platformPlan(ctx, "win32", true);
    expect(detail.file).toBe(launcher);
    const create = detail.commands[0]!.argv;
    expect(create).toEqual(["schtasks", "/Create", "/SC", "ONLOGON", "/TN", "memsvc", "/TR", `wscript.exe //B //Nologo "${launcher}"`, "/RL", "LIMITED", "/F"]);
    // The form Microsoft's page shows for a path with spaces inside /TR: the inner quotes as \".
    expect(windowsCommandLine(create)).toBe(`schtasks /Create /SC ONLOGON /TN memsvc /TR "wscript.exe //B //Nologo \\"${launcher}\\"" /RL LIMITED /F`);
    expect(parseWindowsCommandLine(windowsCommandLine(create))).toEqual(create);
    expect(detail.commands[1]!.argv).toEqual(["schtasks", "/Run", "/TN", "memsvc"]);
  });

  test("windowsArg survives the C runtime's parsing for quotes, trailing backslashes and spaces", () => {
    const cases = ["plain", "", "a b", 'say "hi"', "C:\\dir with space\\", 'back\\\\slash\\"quote', '"', "\\\\server\\share\\x y"];
    for (const c of cases) expect(parseWindowsCommandLine(`x ${windowsArg(c)} y`)).toEqual(["x", c, "y"]);
  });

  test("the launcher sets MEMSVC_HOME and runs the server hidden through cmd with every path quoted", () => {
    const lines = platformPlan(ctx, "win32", true).content.split("\r\n");
    expect(lines).toContain('shell.Environment("Process")("MEMSVC_HOME") = "C:\\Users\\Ann Lee\\.memsvc"');
    expect(lines).toContain(
      'shell.Run "cmd.exe /d /c """"C:\\Program Files\\memsvc\\memsvc.exe"" server --service >> ""C:\\Users\\Ann Lee\\.memsvc\\logs\\server.log"" 2>&1""", 0, False',
    );
  });

  test("without schtasks the launcher goes into the Startup folder and nothing is run", () => {
    const detail = platformPlan(ctx, "win32", false);
    expect(detail.file).toBe("C:\\Users\\Ann Lee\\AppData\\Roaming\\Microsoft\\Windows\\Start Menu\\Programs\\Startup\\memsvc-server.vbs");
    expect(detail.commands).toEqual([]);
    const plan = planService({ command: ["C:\\memsvc.exe"], home: "C:\\m", env, platform: "win32" });
    expect(plan.available).toBe(false);
    expect(plan.commands).toEqual([]);
  });

  test("a /TR over 261 characters and a % in a path are refused with a clear message", () => {
    const deep = { ...env, LOCALAPPDATA: `C:\\${"x".repeat(TR_MAX)}` };
    expect(() => platformPlan(serviceContext({ command: ["C:\\memsvc.exe"], home: "C:\\m", env: deep }, "win32"), "win32", true)).toThrow(/261/);
    expect(() => platformPlan(serviceContext({ command: ["C:\\100%\\memsvc.exe"], home: "C:\\m", env }, "win32"), "win32", true)).toThrow(/%/);
  });
});
