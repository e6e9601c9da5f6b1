import { win32 } from "node:path";
import type { PlatformPlan, ServiceContext } from "./service-context";

/**
 * Windows: a logon task (`schtasks /Create /SC ONLOGON`, per Microsoft's
 * "schtasks create" page) that runs a small VBScript launcher with
 * wscript.exe. The launcher sets MEMSVC_HOME, runs the server without a
 * console window and appends its output to <home>\logs\server.log. Going
 * through a launcher keeps /TR short (its limit is 261 characters) whatever
 * the paths. Where schtasks is not usable the same launcher goes into the
 * user's Startup folder, which runs it at the next logon.
 */
export const TASK_NAME = "memsvc";
export const LAUNCHER = "memsvc-server.vbs";
/** schtasks refuses a longer /TR ("cannot exceed 261 characters"). */
export const TR_MAX = 261;

/**
 * One argument as the Microsoft C runtime (CommandLineToArgvW) parses it,
 * which is how schtasks reads its /TR value: quotes around words with spaces,
 * an inner quote as \", backslashes doubled only before a quote.
 */
export function windowsArg(arg: string): string {
  if (arg.length > 0 && !/[\s"]/.test(arg)) return arg;
  let out = '"';
  let slashes = 0;
  for (const c of arg) {
    if (c === "\\") {
      slashes++;
      continue;
    }
    out += c === '"' ? `${"\\".repeat(slashes * 2 + 1)}"` : "\\".repeat(slashes) + c;
    slashes = 0;
  }
  return `${out}${"\\".repeat(slashes * 2)}"`;
}

/** The command line a Windows process receives for `argv` (what `--dry-run` shows). */
export function windowsCommandLine(argv: string[]): string {
  return argv.map(windowsArg).join(" ");
}

/** A path for cmd.exe: always quoted; `%` would expand even inside quotes, so it is refused. */
function cmdPath(path: string): string {
  if (path.includes("%") || path.includes('"')) throw new Error(`cannot start memsvc through cmd.exe from a path holding % or ": ${path}`);
  return `"${path}"`;
}

const vbsString = (s: string) => `"${s.replace(/"/g, '""')}"`;

export function launcherScript(ctx: ServiceContext): string {
  const [program, ...rest] = ctx.argv;
  const words = [cmdPath(program!), ...rest.map((w) => (/^[\w.:\\/-]+$/.test(w) && !w.includes("%") ? w : cmdPath(w)))];
  // cmd /c with more than two quotes strips the first and the last: hence the outer pair.
  const cmdLine = `cmd.exe /d /c "${words.join(" ")} >> ${cmdPath(ctx.logFile)} 2>&1"`;
  return [
    "' Written by `memsvc service install`; `memsvc service uninstall` removes it.",
    "' Starts the memsvc server for one home without a window; its output goes to the log.",
    'Set shell = CreateObject("WScript.Shell")',
    ...Object.entries(ctx.vars).map(([k, v]) => `shell.Environment("Process")(${vbsString(k)}) = ${vbsString(v)}`),
    `shell.CurrentDirectory = ${vbsString(ctx.home)}`,
    `shell.Run ${vbsString(cmdLine)}, 0, False`,
    "",
  ].join("\r\n");
}

export function startupFolder(env: NodeJS.ProcessEnv, userHome: string): string {
  const appData = env.APPDATA && win32.isAbsolute(env.APPDATA) ? env.APPDATA : win32.join(userHome, "AppData", "Roaming");
  return win32.join(appData, "Microsoft", "Windows", "Start Menu", "Programs", "Startup");
}

export function windowsPlan(ctx: ServiceContext, available: boolean): PlatformPlan {
  const localAppData = ctx.env.LOCALAPPDATA && win32.isAbsolute(ctx.env.LOCALAPPDATA) ? ctx.env.LOCALAPPDATA : win32.join(ctx.userHome, "AppData", "Local");
  const file = available ? win32.join(localAppData, "memsvc", LAUNCHER) : win32.join(startupFolder(ctx.env, ctx.userHome), LAUNCHER);
  const tr = `wscript.exe //B //Nologo "${file}"`;
  if (tr.length > TR_MAX) throw new Error(`the task command would be ${tr.length} characters, over schtasks' ${TR_MAX}: ${tr}`);
  const create = { argv: ["schtasks", "/Create", "/SC", "ONLOGON", "/TN", TASK_NAME, "/TR", tr, "/RL", "LIMITED", "/F"] };
  const run = { argv: ["schtasks", "/Run", "/TN", TASK_NAME] };
  const end = { argv: ["schtasks", "/End", "/TN", TASK_NAME], optional: true };
  return {
    manager: "windows-task",
    file,
    content: launcherScript(ctx),
    mode: 0o600,
    probe: ["schtasks", "/Query", "/FO", "CSV", "/NH"],
    commands: available ? [create, run] : [],
    reloadCommands: available ? [end, create, run] : [],
    removeCommands: available ? [end, { argv: ["schtasks", "/Delete", "/TN", TASK_NAME, "/F"], optional: true }] : [],
    afterRemoveCommands: [],
    statusCommand: ["schtasks", "/Query", "/TN", TASK_NAME],
    logHint: ctx.logFile,
  };
}
