import { chmodSync, copyFileSync, existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { installHooks, lineDiff, SettingsShapeError, shellQuote, uninstallHooks } from "../capture/claude-settings";
import type { HookEvent } from "../capture/hooks";
import { homeDir } from "../config";
import { ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../private-files";
import { parseFlags, UsageError } from "./args";

export const HOOKS_HELP = `memsvc hooks install [--dry-run] [--settings <file>]
memsvc hooks uninstall [--dry-run] [--settings <file>]

Adds memsvc's Claude Code hooks (SessionStart, UserPromptSubmit, PreCompact,
SessionEnd -> \`memsvc hook <event>\`) to ~/.claude/settings.json, or takes
them out again.

  install     merges the hooks in: other keys and your own hooks stay as they
              are; an older memsvc entry is replaced, never duplicated. Run
              twice, the second run changes nothing.
  uninstall   removes memsvc's hook entries and nothing else.
  --dry-run   prints the change as a diff and writes nothing
  --settings  another settings file (e.g. a project's .claude/settings.json)

The command written is the absolute path of this memsvc (the binary, or bun
and src/main.ts when run from source), with MEMSVC_HOME when it is set, so
Claude Code's shell needs no PATH or environment changes. Before writing,
the previous file is kept as settings.json.bak-<timestamp> (mode 0600).
Exit status: 0 done or nothing to do, 1 the file could not be read or
written, 2 usage errors.`;

/** The absolute command line that runs this memsvc: the compiled binary, or bun with src/main.ts from source. */
export function selfCommand(env: NodeJS.ProcessEnv = process.env): string[] {
  const main = Bun.main;
  const compiled = main.startsWith("/$bunfs") || main.startsWith("B:/~BUN");
  const program = compiled ? [process.execPath] : [process.execPath, resolve(main)];
  // A home other than the default travels with the command: Claude Code does not have the user's shell environment.
  const home = env.MEMSVC_HOME && env.MEMSVC_HOME.length > 0 ? [`MEMSVC_HOME=${shellQuote(resolve(env.MEMSVC_HOME))}`] : [];
  return [...home, ...program.map(shellQuote)];
}

export function claudeSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.HOME && env.HOME.length > 0 ? env.HOME : homedir(), ".claude", "settings.json");
}

/** settings.json parsed; an absent or empty file is {}. Throws a message fit for the user. */
export function readSettings(file: string): Record<string, any> {
  if (!existsSync(file)) return {};
  const text = readFileSync(file, "utf8");
  if (text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new SettingsShapeError(`${file} is not valid JSON (${(e as Error).message}); fix it by hand first, nothing was changed`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new SettingsShapeError(`${file} does not hold a JSON object; nothing was changed`);
  return parsed as Record<string, any>;
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, "-");
}

/** Backup first (0600), then the new file through a temp name and rename: a crash leaves the old or the new file. */
function writeSettings(file: string, text: string): string | null {
  let backup: string | null = null;
  const existed = existsSync(file);
  if (existed) {
    backup = `${file}.bak-${stamp()}`;
    copyFileSync(file, backup);
    makePrivate(backup);
  } else {
    ensurePrivateDir(dirname(file));
  }
  // The user's own file keeps its mode; a new one is private.
  const mode = existed ? statSync(file).mode & 0o777 : PRIVATE_FILE_MODE;
  const temp = `${file}.memsvc-${process.pid}.tmp`;
  writeFileSync(temp, text, { mode });
  chmodSync(temp, mode);
  renameSync(temp, file);
  return backup;
}

export async function runHooks(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { "dry-run": { type: "boolean" }, settings: { type: "string" } }, true);
  if (values.help) {
    console.log(HOOKS_HELP);
    return 0;
  }
  const [action, ...extra] = positionals;
  if (action !== "install" && action !== "uninstall") throw new UsageError(action === undefined ? "say install or uninstall" : `unknown action "${action}" (install or uninstall)`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const file = resolve(values.settings ?? claudeSettingsPath());
  const dryRun = values["dry-run"] === true;
  let before: Record<string, any>;
  let after: Record<string, any>;
  try {
    before = readSettings(file);
    const prefix = selfCommand();
    after = action === "install" ? installHooks(before, (event: HookEvent) => [...prefix, "hook", event].join(" ")) : uninstallHooks(before);
  } catch (e) {
    if (!(e instanceof SettingsShapeError)) throw e;
    console.error(`memsvc hooks: ${e.message.startsWith(file) ? e.message : `${file}: ${e.message}; nothing was changed`}`);
    return 1;
  }
  const beforeText = existsSync(file) ? `${JSON.stringify(before, null, 2)}\n` : "";
  const afterText = `${JSON.stringify(after, null, 2)}\n`;
  if (JSON.stringify(before) === JSON.stringify(after)) {
    console.log(action === "install" ? `memsvc hooks are already installed in ${file}; nothing changed` : `no memsvc hooks in ${file}; nothing changed`);
    return 0;
  }
  const diff = lineDiff(beforeText.trimEnd(), afterText.trimEnd());
  if (dryRun) {
    console.log(`--- ${file}\n+++ ${file} (after memsvc hooks ${action})\n${diff}\n\n(dry run: nothing was written)`);
    return 0;
  }
  try {
    const backup = writeSettings(file, afterText);
    console.log(diff);
    console.log(`\n${action === "install" ? "installed memsvc hooks into" : "removed memsvc hooks from"} ${file}${backup ? ` (previous version: ${backup})` : ""}`);
    if (action === "install") console.log(`next: start the server (\`memsvc server\`, home ${homeDir()}), then \`memsvc doctor\` checks the whole chain`);
    return 0;
  } catch (e) {
    console.error(`memsvc hooks: could not write ${file}: ${(e as Error).message}`);
    return 1;
  }
}
