import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { readText, userHome, type Edit, type HarnessModule } from "./harness";
import { isEmptyDocument, readJsonc, removeJson, sameJson, setJson, valueAt } from "./json-edit";
import { isMemsvcMcpArgv, isRemoteEntry, MCP_NAME } from "./mcp-entry";
import { PLUGIN_MARKER, pluginSource } from "./opencode-plugin";
import { WiringError, type Invocation } from "./types";

/**
 * opencode: the MCP server in its global config (~/.config/opencode/
 * opencode.json or .jsonc, or under $XDG_CONFIG_HOME) and a plugin file in
 * its global plugins folder for capture. OpenCode 1.x keeps servers under
 * `mcp.<name>` ({ type: "local", command: [...], enabled, environment });
 * OpenCode 2.x's native shape is `mcp.servers.<name>` and it still reads the
 * 1.x shape, while 1.x would read `servers` as a server and reject it: so the
 * 2.x shape is written only where the file already uses it or the opencode
 * on PATH says it is 2.x.
 */

export const opencodeDir = (env: NodeJS.ProcessEnv) =>
  join(env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.length > 0 ? env.XDG_CONFIG_HOME : join(userHome(env), ".config"), "opencode");
export const opencodePluginFile = (env: NodeJS.ProcessEnv) => join(opencodeDir(env), "plugins", "memsvc.js");

/** The config file opencode reads globally: an existing .jsonc, else an existing .json, else a new opencode.json. */
export function opencodeConfigFile(env: NodeJS.ProcessEnv): string {
  const dir = opencodeDir(env);
  for (const name of ["opencode.jsonc", "opencode.json"]) if (existsSync(join(dir, name))) return join(dir, name);
  return join(dir, "opencode.json");
}

/** The major version of the opencode on PATH, or null (not there, or no answer within 3 s). */
function opencodeMajor(env: NodeJS.ProcessEnv): number | null {
  const path = Bun.which("opencode", { PATH: env.PATH ?? "" });
  if (!path) return null;
  try {
    const r = spawnSync(path, ["--version"], { encoding: "utf8", timeout: 3000, env: { ...process.env, ...env } as Record<string, string> });
    const m = /(\d+)\.\d+/.exec(`${r.stdout ?? ""}`);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

function mcpPath(text: string | null, env: NodeJS.ProcessEnv): string[] {
  const mcp = valueAt(text, ["mcp"]);
  const servers = mcp && typeof mcp === "object" ? (mcp as Record<string, unknown>).servers : undefined;
  if (servers && typeof servers === "object" && !Array.isArray(servers) && (servers as Record<string, unknown>).type === undefined) return ["mcp", "servers"];
  // Entries directly under mcp (ours from an earlier install, or the user's) mean the 1.x shape is in use.
  if (mcp && typeof mcp === "object" && Object.keys(mcp as object).length > 0) return ["mcp"];
  return (opencodeMajor(env) ?? 1) >= 2 ? ["mcp", "servers"] : ["mcp"];
}

function entryFor(inv: Invocation, v2: boolean): Record<string, unknown> {
  const command = [...inv.program, "mcp"];
  const environment = Object.keys(inv.env).length > 0 ? { environment: inv.env } : {};
  return v2 ? { type: "local", command, ...environment } : { type: "local", command, enabled: true, ...environment };
}

const isOurEntry = (entry: unknown) =>
  !!entry && typeof entry === "object" && Array.isArray((entry as { command?: unknown }).command) && isMemsvcMcpArgv((entry as { command: unknown[] }).command);
const isPlugin = (file: string) => basename(file) === "memsvc.js";

export const opencode: HarnessModule = {
  id: "opencode",
  name: "opencode",
  cli: "opencode",
  homes: (env) => [opencodeDir(env)],
  files: (env) => [opencodeConfigFile(env), opencodePluginFile(env)],
  wire({ env, inv }) {
    const edits: Edit[] = [];
    const file = opencodeConfigFile(env);
    const before = readText(file);
    readJsonc(before, file, { comments: true });
    const path = mcpPath(before, env);
    const parent = valueAt(before, path);
    if (parent !== undefined && (parent === null || typeof parent !== "object" || Array.isArray(parent)))
      throw new WiringError(`${file}: "${path.join(".")}" is not an object; nothing was changed`);
    const want = entryFor(inv, path.length === 2);
    const have = valueAt(before, [...path, MCP_NAME]);
    if (!isRemoteEntry(have) && !sameJson(have, want))
      edits.push({
        file,
        before,
        after: setJson(before, [...path, MCP_NAME], want),
        summary: [`${path.join(".")}.${MCP_NAME}: ${have === undefined ? "register" : "update"} the memsvc MCP server (\`memsvc mcp\`)`],
      });
    const plugin = opencodePluginFile(env);
    const pluginBefore = readText(plugin);
    const source = pluginSource(inv);
    if (pluginBefore !== null && !pluginBefore.startsWith(PLUGIN_MARKER))
      throw new WiringError(`${plugin} exists and is not memsvc's; move it away first, nothing was changed`);
    if (pluginBefore !== source)
      edits.push({ file: plugin, before: pluginBefore, after: source, summary: ["plugin: runs `memsvc capture --harness opencode` when a session goes idle"] });
    return edits;
  },
  strip(file, text) {
    if (isPlugin(file)) return text.startsWith(PLUGIN_MARKER) ? { after: null, summary: ["plugin: removed"] } : { after: text, summary: [] };
    readJsonc(text, file, { comments: true });
    let out = text;
    const summary: string[] = [];
    for (const path of [["mcp", "servers"], ["mcp"]]) {
      if (isOurEntry(valueAt(out, [...path, MCP_NAME]))) {
        out = removeJson(out, [...path, MCP_NAME]);
        summary.push(`${path.join(".")}.${MCP_NAME}: removed`);
      }
    }
    return { after: out, summary };
  },
  isEmpty: (file, text) => (isPlugin(file) ? true : isEmptyDocument(text)),
  check(env) {
    const file = opencodeConfigFile(env);
    const plugin = readText(opencodePluginFile(env));
    const hooks = plugin?.startsWith(PLUGIN_MARKER) ? "ok" : "missing";
    try {
      const text = readText(file);
      readJsonc(text, file, { comments: true });
      const mcp = valueAt(text, ["mcp", MCP_NAME]) !== undefined || valueAt(text, ["mcp", "servers", MCP_NAME]) !== undefined ? "ok" : "missing";
      return {
        hooks,
        mcp,
        detail: `capture plugin ${hooks === "ok" ? "installed" : "missing"} (${opencodePluginFile(env)}), MCP server ${mcp === "ok" ? "registered" : "not registered"} in ${file}`,
        advice: hooks === "ok" && mcp === "ok" ? "" : "run `memsvc setup` or `memsvc hooks install --harness opencode`",
      };
    } catch (e) {
      return { hooks, mcp: "missing", detail: (e as Error).message, advice: "fix the file by hand, then run `memsvc hooks install --harness opencode`" };
    }
  },
};
