import { basename, join, resolve } from "node:path";
import { CLAUDE_HOOKS, installedHooks, installHooks, SettingsShapeError, uninstallHooks } from "../../capture/claude-settings";
import { execParts, shellLine } from "./command";
import { readText, userHome, type Edit, type HarnessModule, type WireOptions } from "./harness";
import { appendJson, isEmptyDocument, readJsonc, removeJson, sameJson, setJson, valueAt } from "./json-edit";
import { isOurCommandEntry, isRemoteEntry, MCP_NAME } from "./mcp-entry";
import { WiringError } from "./types";

/**
 * Claude Code: the four hooks in ~/.claude/settings.json and the MCP server
 * at user scope, which Claude Code keeps in ~/.claude.json under
 * `mcpServers` (what `claude mcp add --scope user` writes). Claude Code
 * rewrites ~/.claude.json all the time: only our key is ever touched.
 */

export const claudeSettingsFile = (env: NodeJS.ProcessEnv) => join(userHome(env), ".claude", "settings.json");
export const claudeJsonFile = (env: NodeJS.ProcessEnv) => join(userHome(env), ".claude.json");

const isClaudeJson = (file: string) => basename(file) === ".claude.json";

function shapeGuard<T>(file: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SettingsShapeError) throw new WiringError(`${file}: ${e.message}; nothing was changed`);
    throw e;
  }
}

/** Indexes of `have` that `want` drops, when `want` is `have` minus whole elements in the same order; null otherwise. */
function droppedIndexes(have: unknown[], want: unknown[]): number[] | null {
  const dropped: number[] = [];
  let j = 0;
  for (let i = 0; i < have.length; i++) {
    if (j < want.length && sameJson(have[i], want[j])) j++;
    else dropped.push(i);
  }
  return j === want.length ? dropped : null;
}

/**
 * The settings text with each event's groups changed from `have` to `want`
 * with the smallest edit: a group appended or dropped on its own lines when
 * that is all that changed (the user's groups keep their bytes), else the
 * event's list rewritten.
 */
function editHookEvents(
  text: string | null,
  have: Record<string, any>,
  want: Record<string, any>,
  events: readonly string[],
): { text: string | null; changed: string[] } {
  let out = text;
  const changed: string[] = [];
  for (const ev of events) {
    const a = have.hooks?.[ev];
    const b = want.hooks?.[ev];
    if (sameJson(a, b)) continue;
    changed.push(ev);
    if (b === undefined) out = removeJson(out ?? "{}", ["hooks", ev]);
    else if (Array.isArray(a) && a.length > 0 && b.length === a.length + 1 && sameJson(a, b.slice(0, a.length)))
      out = appendJson(out!, ["hooks", ev], b[a.length]);
    else if (Array.isArray(a) && droppedIndexes(a, b) !== null && b.length > 0)
      for (const i of droppedIndexes(a, b)!.reverse()) out = setJson(out, ["hooks", ev, i], undefined);
    else out = setJson(out, ["hooks", ev], b);
  }
  return { text: out, changed };
}

export function hookEdits(file: string, opts: WireOptions, plans = CLAUDE_HOOKS, harnessFlag?: string, comments = false): Edit | null {
  const before = readText(file);
  const have = readJsonc(before, file, { comments });
  const want = shapeGuard(file, () => installHooks(have, (ev) => shellLine(opts.inv, ["hook", ev, ...(harnessFlag ? ["--harness", harnessFlag] : [])]), plans));
  const { text, changed } = editHookEvents(
    before,
    have,
    want,
    plans.map((p) => p.harnessEvent),
  );
  if (changed.length === 0) return null;
  return { file, before, after: text, summary: changed.map((ev) => `hooks.${ev}: memsvc hook ${plans.find((p) => p.harnessEvent === ev)!.event}`) };
}

export function stripHooks(file: string, text: string, plans = CLAUDE_HOOKS, comments = false): { after: string; summary: string[] } {
  const have = readJsonc(text, file, { comments });
  const want = shapeGuard(file, () => uninstallHooks(have, plans));
  const { text: after, changed } = editHookEvents(
    text,
    have,
    want,
    plans.map((p) => p.harnessEvent),
  );
  return { after: after ?? text, summary: changed.map((ev) => `hooks.${ev}: memsvc's hook removed`) };
}

/**
 * `<path>.memsvc = entry` in a JSON(C) text (the file as it is, unless
 * `from` carries an earlier edit of it), unless an equal entry, or a remote
 * one the user set, is already there.
 */
export function mcpEdit(file: string, path: string[], entry: Record<string, unknown>, comments: boolean, from?: Edit | null): Edit | null {
  const before = from ? from.before : readText(file);
  const start = from ? from.after : before;
  readJsonc(start, file, { comments });
  const parent = valueAt(start, path);
  if (parent !== undefined && (parent === null || typeof parent !== "object" || Array.isArray(parent)))
    throw new WiringError(`${file}: "${path.join(".")}" is not an object; nothing was changed`);
  const have = valueAt(start, [...path, MCP_NAME]);
  if (isRemoteEntry(have) || sameJson(have, entry)) return from ?? null;
  const line = `${path.join(".")}.${MCP_NAME}: ${have === undefined ? "register" : "update"} the memsvc MCP server (\`memsvc mcp\`)`;
  return { file, before, after: setJson(start, [...path, MCP_NAME], entry), summary: [...(from?.summary ?? []), line] };
}

export function stripMcp(
  file: string,
  text: string,
  path: string[],
  isOurs: (entry: unknown) => boolean,
  comments: boolean,
  keepDepth: number,
): { after: string; summary: string[] } {
  readJsonc(text, file, { comments });
  const have = valueAt(text, [...path, MCP_NAME]);
  if (!isOurs(have)) return { after: text, summary: [] };
  return { after: removeJson(text, [...path, MCP_NAME], keepDepth), summary: [`${path.join(".")}.${MCP_NAME}: memsvc's MCP server removed`] };
}

export const claudeCode: HarnessModule = {
  id: "claude-code",
  name: "Claude Code",
  cli: "claude",
  homes: (env) => [join(userHome(env), ".claude")],
  files: (env, claudeSettings) => [resolve(claudeSettings ?? claudeSettingsFile(env)), claudeJsonFile(env)],
  wire(opts) {
    const settings = resolve(opts.claudeSettings ?? claudeSettingsFile(opts.env));
    const { command, args } = execParts(opts.inv, ["mcp"]);
    const edits = [hookEdits(settings, opts), mcpEdit(claudeJsonFile(opts.env), ["mcpServers"], { type: "stdio", command, args, env: opts.inv.env }, false)];
    return edits.filter((e): e is Edit => e !== null);
  },
  strip(file, text) {
    return isClaudeJson(file) ? stripMcp(file, text, ["mcpServers"], isOurCommandEntry, false, 1) : stripHooks(file, text);
  },
  isEmpty(file, text) {
    if (!isClaudeJson(file)) return isEmptyDocument(text);
    const v = readJsonc(text, file, { comments: false });
    const keys = Object.keys(v);
    return keys.length === 0 || (keys.length === 1 && sameJson(v.mcpServers, {}));
  },
  check(env) {
    const file = claudeSettingsFile(env);
    let hooks: "ok" | "missing" | "partial" = "missing";
    let detail: string;
    try {
      const installed = installedHooks(readJsonc(readText(file), file, { comments: false }));
      const n = installed.filter((h) => h.command !== null).length;
      hooks = n === installed.length ? "ok" : n === 0 ? "missing" : "partial";
      detail = `hooks ${n}/${installed.length} in ${file}`;
    } catch (e) {
      detail = (e as Error).message;
    }
    const claudeJson = claudeJsonFile(env);
    let mcp: "ok" | "missing" = "missing";
    try {
      const entry = valueAt(readText(claudeJson), ["mcpServers", MCP_NAME]);
      readJsonc(readText(claudeJson), claudeJson, { comments: false });
      mcp = entry && typeof entry === "object" ? "ok" : "missing";
      detail += `; MCP server ${mcp === "ok" ? "registered" : "not registered"} in ${claudeJson} (user scope)`;
    } catch (e) {
      detail += `; ${(e as Error).message}`;
    }
    return { hooks, mcp, detail, advice: hooks === "ok" && mcp === "ok" ? "" : "run `memsvc setup` or `memsvc hooks install --harness claude-code`" };
  },
};
