import { join } from "node:path";
import { memsvcProgramLength } from "../../capture/claude-settings";
import { execParts } from "./command";
import { readText, userHome, type Edit, type HarnessModule } from "./harness";
import { sameJson } from "./json-edit";
import { isOurCommandEntry, MCP_NAME } from "./mcp-entry";
import { appendTable, hasTable, parseToml, removeTable, removeTopLevel, setTopLevel, tomlArray, tomlInlineTable, tomlString } from "./toml-edit";
import { WiringError, type Invocation } from "./types";

/**
 * Codex CLI: `notify` in config.toml runs `memsvc hook codex-notify` after
 * every agent turn (Codex appends its JSON payload as the last argument),
 * and `[mcp_servers.memsvc]` gives the agent memsvc's tools. A `notify` the
 * user already had is chained, not replaced: ours carries it after `--then`
 * and the hook runs it with the same payload; uninstall puts it back.
 */

export const codexHome = (env: NodeJS.ProcessEnv) => (env.CODEX_HOME && env.CODEX_HOME.length > 0 ? env.CODEX_HOME : join(userHome(env), ".codex"));
export const codexConfigFile = (env: NodeJS.ProcessEnv) => join(codexHome(env), "config.toml");
const TABLE = `mcp_servers.${MCP_NAME}`;

/** A notify argv that is memsvc's: `<memsvc> hook codex-notify [--home DIR] [--then <argv...>]`; null when it is someone else's. */
export function parseOurNotify(argv: unknown): { home: string | null; chain: string[] } | null {
  if (!Array.isArray(argv) || !argv.every((w) => typeof w === "string")) return null;
  const n = memsvcProgramLength(argv);
  if (n === 0 || argv[n] !== "hook" || argv[n + 1] !== "codex-notify") return null;
  let i = n + 2;
  let home: string | null = null;
  if (argv[i] === "--home" && i + 1 < argv.length) {
    home = argv[i + 1]!;
    i += 2;
  }
  if (argv[i] === "--then") return { home, chain: argv.slice(i + 1) };
  return i === argv.length ? { home, chain: [] } : null;
}

export function notifyArgv(inv: Invocation, chain: readonly string[]): string[] {
  const home = inv.env.MEMSVC_HOME;
  return [...inv.program, "hook", "codex-notify", ...(home ? ["--home", home] : []), ...(chain.length > 0 ? ["--then", ...chain] : [])];
}

function mcpEntry(inv: Invocation): Record<string, unknown> {
  const { command, args } = execParts(inv, ["mcp"]);
  return Object.keys(inv.env).length > 0 ? { command, args, env: inv.env } : { command, args };
}

function mcpServers(doc: Record<string, unknown>, file: string): Record<string, unknown> | undefined {
  const v = doc.mcp_servers;
  if (v === undefined) return undefined;
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new WiringError(`${file}: "mcp_servers" is not a table; nothing was changed`);
  return v as Record<string, unknown>;
}

/** smol-toml's values to plain JSON for comparison (its tables are plain objects already). */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v ?? null));

export const codex: HarnessModule = {
  id: "codex",
  name: "Codex CLI",
  cli: "codex",
  homes: (env) => [codexHome(env)],
  files: (env) => [codexConfigFile(env)],
  wire({ env, inv }) {
    const file = codexConfigFile(env);
    const before = readText(file);
    let text = before ?? "";
    const doc = parseToml(text, file);
    const summary: string[] = [];
    const current = doc.notify;
    if (current !== undefined && !(Array.isArray(current) && current.every((w) => typeof w === "string")))
      throw new WiringError(`${file}: "notify" is not a list of strings; nothing was changed`);
    const ours = parseOurNotify(current);
    const chain = ours ? ours.chain : ((current as string[] | undefined) ?? []);
    const wantNotify = notifyArgv(inv, chain);
    if (!sameJson(current, wantNotify)) {
      text = setTopLevel(text, "notify", tomlArray(wantNotify));
      summary.push(
        current === undefined || ours
          ? "notify: memsvc hook codex-notify"
          : `notify: memsvc hook codex-notify, which then runs your notify (${(current as string[]).join(" ")}) with the same payload`,
      );
    }
    const want = mcpEntry(inv);
    const have = mcpServers(doc, file)?.[MCP_NAME];
    if (!sameJson(plain(have), want)) {
      if (have !== undefined && !hasTable(text, TABLE))
        throw new WiringError(
          `${file} defines mcp_servers.${MCP_NAME} in a form memsvc does not edit (inline or dotted keys); remove it or write it as a [${TABLE}] table, nothing was changed`,
        );
      text = appendTable(removeTable(text, TABLE), TABLE, [
        ["command", tomlString(want.command as string)],
        ["args", tomlArray(want.args as string[])],
        ...(want.env ? ([["env", tomlInlineTable(want.env as Record<string, string>)]] as [string, string][]) : []),
      ]);
      summary.push(`[${TABLE}]: ${have === undefined ? "register" : "update"} the memsvc MCP server (\`memsvc mcp\`)`);
    }
    if (summary.length === 0) return [];
    // The edit must read back as exactly what was meant, or nothing is written.
    const check = parseToml(text, file);
    if (!sameJson(check.notify, wantNotify) || !sameJson(plain(mcpServers(check, file)?.[MCP_NAME]), want))
      throw new WiringError(`${file}: memsvc could not edit this file safely; nothing was changed`);
    return [{ file, before, after: text, summary } satisfies Edit];
  },
  strip(file, text) {
    const doc = parseToml(text, file);
    let out = text;
    const summary: string[] = [];
    const ours = parseOurNotify(doc.notify);
    if (ours) {
      out = ours.chain.length > 0 ? setTopLevel(out, "notify", tomlArray(ours.chain)) : removeTopLevel(out, "notify");
      summary.push(ours.chain.length > 0 ? `notify: your own notify (${ours.chain.join(" ")}) put back` : "notify: memsvc's removed");
    }
    const have = mcpServers(doc, file)?.[MCP_NAME];
    if (isOurCommandEntry(plain(have))) {
      if (hasTable(out, TABLE)) {
        out = removeTable(out, TABLE);
        summary.push(`[${TABLE}]: removed`);
      } else summary.push(`mcp_servers.${MCP_NAME} is written inline or with dotted keys: left in place, remove it by hand`);
    }
    parseToml(out, file);
    return { after: out, summary };
  },
  isEmpty: (_file, text) => text.trim() === "",
  check(env) {
    const file = codexConfigFile(env);
    try {
      const doc = parseToml(readText(file) ?? "", file);
      const hooks = parseOurNotify(doc.notify) ? "ok" : "missing";
      const mcp = mcpServers(doc, file)?.[MCP_NAME] !== undefined ? "ok" : "missing";
      return {
        hooks,
        mcp,
        detail: `notify ${hooks === "ok" ? "runs memsvc hook codex-notify" : "does not run memsvc"}, MCP server ${mcp === "ok" ? "registered" : "not registered"} in ${file}`,
        advice: hooks === "ok" && mcp === "ok" ? "" : "run `memsvc setup` or `memsvc hooks install --harness codex`",
      };
    } catch (e) {
      return {
        hooks: "missing",
        mcp: "missing",
        detail: (e as Error).message,
        advice: "fix the file by hand, then run `memsvc hooks install --harness codex`",
      };
    }
  },
};
