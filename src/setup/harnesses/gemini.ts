import { join } from "node:path";
import { installedHooks, type HookPlan } from "../../capture/claude-settings";
import { hookEdits, mcpEdit, stripHooks, stripMcp } from "./claude-code";
import { execParts } from "./command";
import { readText, userHome, type HarnessModule } from "./harness";
import { isEmptyDocument, readJsonc, valueAt } from "./json-edit";
import { isOurCommandEntry, MCP_NAME } from "./mcp-entry";

/**
 * Gemini CLI: hooks and `mcpServers` in ~/.gemini/settings.json (JSON with
 * comments). Its `hooks` object has Claude Code's shape with Gemini's event
 * names and timeouts in milliseconds; `memsvc hook <event> --harness gemini`
 * reads Gemini's stdin and answers in its JSON (hookSpecificOutput.additionalContext).
 */

export const GEMINI_HOOKS: readonly HookPlan[] = [
  { harnessEvent: "SessionStart", event: "session-start", timeout: 5000, name: "memsvc-session-start" },
  { harnessEvent: "BeforeAgent", event: "user-prompt", timeout: 2000, name: "memsvc-recall" },
  { harnessEvent: "PreCompress", event: "pre-compact", timeout: 5000, name: "memsvc-capture-before-compress" },
  { harnessEvent: "SessionEnd", event: "session-end", timeout: 5000, name: "memsvc-capture" },
];

export const geminiSettingsFile = (env: NodeJS.ProcessEnv) => join(userHome(env), ".gemini", "settings.json");

export const gemini: HarnessModule = {
  id: "gemini",
  name: "Gemini CLI",
  cli: "gemini",
  homes: (env) => [join(userHome(env), ".gemini")],
  files: (env) => [geminiSettingsFile(env)],
  wire(opts) {
    const file = geminiSettingsFile(opts.env);
    const { command, args } = execParts(opts.inv, ["mcp"]);
    const entry = Object.keys(opts.inv.env).length > 0 ? { command, args, env: opts.inv.env } : { command, args };
    // One file, two edits: the MCP entry goes into the text the hook edit produced.
    const edit = mcpEdit(file, ["mcpServers"], entry, true, hookEdits(file, opts, GEMINI_HOOKS, "gemini", true));
    return edit ? [edit] : [];
  },
  strip(file, text) {
    const hooks = stripHooks(file, text, GEMINI_HOOKS, true);
    const mcp = stripMcp(file, hooks.after, ["mcpServers"], isOurCommandEntry, true, 0);
    return { after: mcp.after, summary: [...hooks.summary, ...mcp.summary] };
  },
  isEmpty: (_file, text) => isEmptyDocument(text),
  check(env) {
    const file = geminiSettingsFile(env);
    try {
      const text = readText(file);
      const doc = readJsonc(text, file, { comments: true });
      const installed = installedHooks(doc, GEMINI_HOOKS);
      const n = installed.filter((h) => h.command !== null).length;
      const hooks = n === installed.length ? "ok" : n === 0 ? "missing" : "partial";
      const mcp = valueAt(text, ["mcpServers", MCP_NAME]) !== undefined ? "ok" : "missing";
      // Older Gemini CLI releases run hooks only when switched on; say so rather than guess the version.
      const off = doc.hooksConfig?.enabled === false || doc.hooks?.enabled === false ? "; hooks are switched off in this file (hooksConfig.enabled)" : "";
      return {
        hooks,
        mcp,
        detail: `hooks ${n}/${installed.length}, MCP server ${mcp === "ok" ? "registered" : "not registered"} in ${file}${off}`,
        advice:
          hooks === "ok" && mcp === "ok" && !off
            ? ""
            : off && hooks === "ok" && mcp === "ok"
              ? "set hooksConfig.enabled to true in ~/.gemini/settings.json"
              : "run `memsvc setup` or `memsvc hooks install --harness gemini`",
      };
    } catch (e) {
      return {
        hooks: "missing",
        mcp: "missing",
        detail: (e as Error).message,
        advice: "fix the file by hand, then run `memsvc hooks install --harness gemini`",
      };
    }
  },
};
