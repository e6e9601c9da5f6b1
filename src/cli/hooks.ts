import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { lineDiff, SettingsShapeError, shellQuote } from "../capture/claude-settings";
import { homeDir } from "../config";
import {
  applyChanges,
  findHarnesses,
  HARNESS_IDS,
  planUnwiring,
  planWiring,
  readWiringManifest,
  WiringError,
  type FileChange,
  type HarnessId,
} from "../setup/harnesses";
import { parseFlags, UsageError } from "./args";

export const HOOKS_HELP = `memsvc hooks install [--harness <name>] [--dry-run] [--settings <file>]
memsvc hooks uninstall [--harness <name>] [--dry-run] [--settings <file>]

Wires coding-agent harnesses to memsvc, or unwires them: hooks (or a
plugin) that recall memories and capture sessions, and the \`memsvc mcp\`
server that gives the agent the memsvc_get / memsvc_search tools.

  claude-code  ~/.claude/settings.json: SessionStart, UserPromptSubmit,
               PreCompact, SessionEnd -> \`memsvc hook <event>\`;
               ~/.claude.json: mcpServers.memsvc (user scope)
  codex        ~/.codex/config.toml (or $CODEX_HOME): notify -> \`memsvc hook
               codex-notify\` (a notify you had is chained and kept);
               [mcp_servers.memsvc]
  gemini       ~/.gemini/settings.json: SessionStart, BeforeAgent,
               PreCompress, SessionEnd -> \`memsvc hook <event> --harness
               gemini\`; mcpServers.memsvc
  opencode     ~/.config/opencode/opencode.json(c): the memsvc MCP server;
               plugins/memsvc.js: \`memsvc capture\` when a session goes idle

  --harness   claude-code (or claude), codex, gemini, opencode, a comma
              list, or all; default: every harness found on this machine
              (its folder exists or its CLI is on PATH), Claude Code when
              none is; uninstall also covers harnesses it wired before
  --dry-run   prints the change as a diff and writes nothing
  --settings  another Claude Code settings file (e.g. a project's
              .claude/settings.json); implies --harness claude-code

Install merges: other keys, your own hooks and entries, comments and
formatting stay as they are; run twice, the second run changes nothing.
The command written is the absolute path of this memsvc (the binary, or bun
and src/main.ts from source), with MEMSVC_HOME when it is set. Every file is
copied to <home>/backups/wiring-<timestamp>/ (0600) before it is written,
and <home>/state/wiring.json records what was written. Uninstall puts back
the exact bytes from before install when a file is as memsvc left it, and
otherwise (e.g. Claude Code rewrote ~/.claude.json since) takes out only
memsvc's entries. Exit status: 0 done or nothing to do, 1 a file could not
be read or written, 2 usage errors.`;

/** This memsvc's argv, unquoted: `MEMSVC_HOME=<dir>` first when set, then the binary, or bun and src/main.ts. */
export function selfArgv(env: NodeJS.ProcessEnv = process.env): string[] {
  const main = Bun.main;
  const compiled = main.startsWith("/$bunfs") || main.startsWith("B:/~BUN");
  const program = compiled ? [process.execPath] : [process.execPath, resolve(main)];
  // A home other than the default travels with the command: harnesses do not have the user's shell environment.
  const home = env.MEMSVC_HOME && env.MEMSVC_HOME.length > 0 ? [`MEMSVC_HOME=${resolve(env.MEMSVC_HOME)}`] : [];
  return [...home, ...program];
}

/** selfArgv as shell words, for a command line that a shell runs. */
export function selfCommand(env: NodeJS.ProcessEnv = process.env): string[] {
  return selfArgv(env).map((w) => (w.startsWith("MEMSVC_HOME=") ? `MEMSVC_HOME=${shellQuote(w.slice("MEMSVC_HOME=".length))}` : shellQuote(w)));
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
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new SettingsShapeError(`${file} does not hold a JSON object; nothing was changed`);
  return parsed as Record<string, any>;
}

/** `--harness` as harness ids; null = not given. */
export function parseHarnessFlag(value: string | undefined): HarnessId[] | "all" | null {
  if (value === undefined) return null;
  const ids: HarnessId[] = [];
  for (const raw of value.split(",").map((s) => s.trim().toLowerCase())) {
    if (raw === "all") return "all";
    const id = raw === "claude" ? "claude-code" : raw === "gemini-cli" ? "gemini" : raw === "codex-cli" ? "codex" : raw;
    if (!(HARNESS_IDS as readonly string[]).includes(id)) throw new UsageError(`unknown harness "${raw}" (claude-code, codex, gemini, opencode or all)`);
    if (!ids.includes(id as HarnessId)) ids.push(id as HarnessId);
  }
  return ids;
}

/**
 * A line diff of the changed region only: ~/.claude.json can hold thousands
 * of lines, and the edit is local, so the common head and tail are cut first.
 */
export function localDiff(before: string, after: string, context = 2): string {
  const a = before === "" ? [] : before.split("\n");
  const b = after === "" ? [] : after.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const from = Math.max(0, head - context);
  const diff = lineDiff(
    a.slice(from, a.length - Math.max(0, tail - context)).join("\n"),
    b.slice(from, b.length - Math.max(0, tail - context)).join("\n"),
    context,
  );
  return `${from > 0 ? "  ...\n" : ""}${diff}${tail > context ? "\n  ..." : ""}`;
}

function describe(change: FileChange): string {
  const head = `${change.file}${change.before === null ? " (new file)" : change.after === null ? " (deleted)" : ""}`;
  const lines = change.summary.map((s) => `  * ${s}`);
  // A plugin file is all memsvc's: its summary says enough.
  const diff = change.file.endsWith(".js") || change.after === null ? "" : `\n${localDiff((change.before ?? "").trimEnd(), change.after.trimEnd())}`;
  return `${head}\n${lines.join("\n")}${diff}`;
}

function targets(flag: HarnessId[] | "all" | null, action: "install" | "uninstall", home: string): { ids: HarnessId[]; why: string } {
  if (flag === "all") return { ids: [...HARNESS_IDS], why: "all harnesses" };
  if (flag) return { ids: flag, why: "" };
  const found = findHarnesses(process.env).filter((h) => h.found);
  const ids = found.map((h) => h.id);
  if (action === "uninstall") for (const rec of Object.values(readWiringManifest(home).files)) if (!ids.includes(rec.harness)) ids.push(rec.harness);
  return { ids: HARNESS_IDS.filter((id) => ids.includes(id)), why: found.map((h) => `${h.name}: ${h.evidence}`).join("; ") };
}

export async function runHooks(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, { "dry-run": { type: "boolean" }, settings: { type: "string" }, harness: { type: "string" } }, true);
  if (values.help) {
    console.log(HOOKS_HELP);
    return 0;
  }
  const [action, ...extra] = positionals;
  if (action !== "install" && action !== "uninstall")
    throw new UsageError(action === undefined ? "say install or uninstall" : `unknown action "${action}" (install or uninstall)`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const settings = values.settings === undefined ? undefined : resolve(values.settings);
  let flag = parseHarnessFlag(values.harness);
  if (settings && flag === null) flag = ["claude-code"];
  const dryRun = values["dry-run"] === true;
  const home = homeDir();
  let { ids, why } = targets(flag, action, home);
  if (ids.length === 0) {
    if (action === "uninstall") {
      console.log("no harness found and nothing recorded as wired; nothing changed");
      return 0;
    }
    // What this command always did: Claude Code's hooks, ready for when it is installed.
    ids = ["claude-code"];
    why = "";
    console.log(
      "no coding-agent harness found (no ~/.claude, ~/.codex, ~/.gemini or ~/.config/opencode, and no claude, codex, gemini or opencode on PATH): wiring Claude Code; name others with --harness",
    );
  }
  if (why && flag === null) console.log(`found ${why}`);
  let failed = false;
  const plans: { id: HarnessId; changes: FileChange[] }[] = [];
  for (const id of ids) {
    try {
      const changes =
        action === "install"
          ? planWiring(id, { command: selfArgv(), env: process.env, claudeSettings: settings })
          : planUnwiring(id, { env: process.env, home, claudeSettings: settings });
      plans.push({ id, changes });
    } catch (e) {
      if (!(e instanceof WiringError)) throw e;
      console.error(`memsvc hooks: ${e.message}`);
      failed = true;
    }
  }
  let wrote = false;
  for (const { id, changes } of plans) {
    if (changes.length === 0) {
      console.log(
        action === "install" ? `${id}: memsvc hooks are already installed; nothing changed` : `${id}: no memsvc hooks or MCP entry found; nothing changed`,
      );
      continue;
    }
    console.log(`${id}:\n${changes.map(describe).join("\n\n")}\n`);
    if (dryRun) continue;
    try {
      const results = applyChanges(changes, { home });
      wrote = true;
      for (const r of results) if (r.backup) console.log(`  previous version of ${r.file}: ${r.backup}`);
      console.log(`${action === "install" ? "wired" : "unwired"} ${id}\n`);
    } catch (e) {
      console.error(`memsvc hooks: could not write for ${id}: ${(e as Error).message}`);
      failed = true;
    }
  }
  if (dryRun) console.log("(dry run: nothing was written)");
  if (wrote && action === "install")
    console.log(
      `next: start the server (\`memsvc server\`, home ${home}), then \`memsvc doctor\` checks the whole chain; restart running agents so they load the hooks and the MCP server`,
    );
  return failed ? 1 : 0;
}
