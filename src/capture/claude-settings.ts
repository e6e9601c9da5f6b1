import { HOOK_EVENTS, type HookEvent } from "./hooks";

/**
 * memsvc's entries in Claude Code's settings.json `hooks` object:
 *   { "hooks": { "<Event>": [ { "matcher"?: "...", "hooks": [ { "type": "command", "command": "...", "timeout": s } ] } ] } }
 * Pure functions over parsed JSON: merging in, taking out, and reading back
 * what is installed. Everything else in the file (other keys, the user's own
 * hooks, their order) is left as it was.
 */

/**
 * One harness event -> memsvc hook event, with the harness timeout (above the
 * hook's own budget; Claude Code counts seconds, Gemini CLI milliseconds).
 * Gemini CLI's settings.json `hooks` has the same shape as Claude Code's.
 */
export interface HookPlan {
  harnessEvent: string;
  event: HookEvent;
  timeout: number;
  matcher?: string;
  /** Gemini CLI shows a hook's name in its logs and `/hooks` list. */
  name?: string;
}

export const CLAUDE_HOOKS: readonly HookPlan[] = [
  { harnessEvent: "SessionStart", event: "session-start", timeout: 5 },
  { harnessEvent: "UserPromptSubmit", event: "user-prompt", timeout: 2 },
  { harnessEvent: "PreCompact", event: "pre-compact", timeout: 5, matcher: "" },
  { harnessEvent: "SessionEnd", event: "session-end", timeout: 5 },
];

export class SettingsShapeError extends Error {}

type Json = Record<string, any>;

const baseName = (path: string) => path.replace(/\\/g, "/").split("/").at(-1)!;

/**
 * A hook command is memsvc's when, after any `VAR=value` assignments, it is
 * exactly `<memsvc executable> hook <event> [--harness <name>]` (memsvc,
 * memsvc.exe, memsvc-<platform>) or `<bun> <.../src/main.ts> hook <event>`
 * with the same optional flag. This also
 * recognises the entries the README once told users to paste, so installing
 * never leaves a second copy next to them.
 */
export function memsvcHookEvent(command: unknown): HookEvent | null {
  if (typeof command !== "string") return null;
  const words = shellWords(command);
  while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) words.shift();
  const programLength = memsvcProgramLength(words);
  if (programLength === 0) return null;
  const rest = words.slice(programLength);
  const flagged = rest.length === 4 && rest[2] === "--harness" && /^[\w-]+$/.test(rest[3]!);
  return (rest.length === 2 || flagged) && rest[0] === "hook" && (HOOK_EVENTS as readonly string[]).includes(rest[1]!) ? (rest[1] as HookEvent) : null;
}

/** Whether argv (after any VAR=value words) runs this memsvc: its executable, or bun with src/main.ts. */
export function memsvcProgramLength(words: readonly string[]): number {
  if (/^memsvc(-[\w-]+)?(\.exe)?$/.test(baseName(words[0] ?? ""))) return 1;
  if (/^bun(\.exe)?$/.test(baseName(words[0] ?? "")) && baseName(words[1] ?? "") === "main.ts") return 2;
  return 0;
}

/** The program a hook command runs (after any VAR=value), and MEMSVC_HOME if it sets one. */
export function commandParts(command: string): { program: string | null; home: string | null } {
  const words = shellWords(command);
  let home: string | null = null;
  while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) {
    const word = words.shift()!;
    if (word.startsWith("MEMSVC_HOME=")) home = word.slice("MEMSVC_HOME=".length);
  }
  return { program: words[0] ?? null, home };
}

/** POSIX-shell quoting; Claude Code runs hook commands through a shell (Git Bash on Windows). */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Splits a command line as a POSIX shell would for plain words and quotes (no expansion). */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let cur = "";
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      cur += line.slice(i + 1, end === -1 ? undefined : end);
      i = end === -1 ? line.length : end;
      inWord = true;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === "\\" && j + 1 < line.length && '"\\$`'.includes(line[j + 1]!)) j++;
        cur += line[j];
      }
      i = j;
      inWord = true;
    } else if (c === "\\" && i + 1 < line.length) {
      cur += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(cur);
      cur = "";
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) words.push(cur);
  return words;
}

function hooksObject(settings: Json): Json | undefined {
  const hooks = settings.hooks;
  if (hooks === undefined) return undefined;
  if (hooks === null || typeof hooks !== "object" || Array.isArray(hooks)) throw new SettingsShapeError(`"hooks" is not an object`);
  return hooks;
}

function groupsOf(hooks: Json, harnessEvent: string): Json[] | undefined {
  const groups = hooks[harnessEvent];
  if (groups === undefined) return undefined;
  if (!Array.isArray(groups)) throw new SettingsShapeError(`"hooks.${harnessEvent}" is not a list`);
  return groups;
}

/** memsvc's hook entries under one Claude Code event, wherever they sit. */
function ourEntries(groups: Json[]): Json[] {
  const found: Json[] = [];
  for (const g of groups) if (g && Array.isArray(g.hooks)) for (const h of g.hooks) if (h && memsvcHookEvent(h.command)) found.push(h);
  return found;
}

/** Removes memsvc's entries from the groups; a group left with no hooks by that is dropped. */
function withoutOurs(groups: Json[]): Json[] {
  const out: Json[] = [];
  for (const g of groups) {
    if (!g || !Array.isArray(g.hooks)) {
      out.push(g);
      continue;
    }
    const kept = g.hooks.filter((h: Json) => !(h && memsvcHookEvent(h.command)));
    if (kept.length === g.hooks.length) out.push(g);
    else if (kept.length > 0) out.push({ ...g, hooks: kept });
  }
  return out;
}

function desiredEntry(command: (event: HookEvent) => string, plan: HookPlan): Json {
  return plan.name === undefined
    ? { type: "command", command: command(plan.event), timeout: plan.timeout }
    : { name: plan.name, type: "command", command: command(plan.event), timeout: plan.timeout };
}

/**
 * settings with memsvc's hooks in place. An event that already has exactly
 * the wanted entry is left untouched (so a second install changes nothing);
 * otherwise memsvc's old entries there are replaced by one new group at the end.
 */
export function installHooks(settings: Json, command: (event: HookEvent) => string, plans: readonly HookPlan[] = CLAUDE_HOOKS): Json {
  const next: Json = structuredClone(settings);
  const hooks = hooksObject(next) ?? (next.hooks = {});
  for (const plan of plans) {
    const groups = groupsOf(hooks, plan.harnessEvent) ?? [];
    const want = desiredEntry(command, plan);
    const ours = ourEntries(groups);
    if (ours.length === 1 && JSON.stringify(ours[0]) === JSON.stringify(want)) continue;
    const group: Json = plan.matcher === undefined ? { hooks: [want] } : { matcher: plan.matcher, hooks: [want] };
    hooks[plan.harnessEvent] = [...withoutOurs(groups), group];
  }
  return next;
}

/** settings without memsvc's hooks; events and the hooks object are dropped only when that emptied them. */
export function uninstallHooks(settings: Json, plans: readonly HookPlan[] = CLAUDE_HOOKS): Json {
  const next: Json = structuredClone(settings);
  const hooks = hooksObject(next);
  if (!hooks) return next;
  let emptied = false;
  for (const plan of plans) {
    const groups = groupsOf(hooks, plan.harnessEvent);
    if (!groups || ourEntries(groups).length === 0) continue;
    const kept = withoutOurs(groups);
    if (kept.length > 0) hooks[plan.harnessEvent] = kept;
    else {
      delete hooks[plan.harnessEvent];
      emptied = true;
    }
  }
  if (emptied && Object.keys(hooks).length === 0) delete next.hooks;
  return next;
}

/** Which memsvc hooks the settings hold, per harness event: the command, or null when missing. */
export function installedHooks(
  settings: Json,
  plans: readonly HookPlan[] = CLAUDE_HOOKS,
): { harnessEvent: string; event: HookEvent; command: string | null }[] {
  let hooks: Json | undefined;
  try {
    hooks = hooksObject(settings);
  } catch {
    hooks = undefined;
  }
  return plans.map((plan) => {
    const groups = hooks && Array.isArray(hooks[plan.harnessEvent]) ? (hooks[plan.harnessEvent] as Json[]) : [];
    const entry = ourEntries(groups).find((h) => memsvcHookEvent(h.command) === plan.event);
    return { harnessEvent: plan.harnessEvent, event: plan.event, command: entry ? String(entry.command) : null };
  });
}

/**
 * A line diff of two texts (`-`/`+`/` ` prefixes) with `context` unchanged
 * lines around each change. settings.json is a few KB, so the plain LCS
 * table is cheap; a diff library for one CLI message was not worth a dependency.
 */
export function lineDiff(before: string, after: string, context = 2): string {
  const a = before === "" ? [] : before.split("\n");
  const b = after === "" ? [] : after.split("\n");
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: [" " | "-" | "+", string][] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) ops.push([" ", a[i++]!]), j++;
    else if (i < a.length && (j === b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push(["-", a[i++]!]);
    else ops.push(["+", b[j++]!]);
  }
  const show = ops.map((op, k) => op[0] !== " " || ops.slice(Math.max(0, k - context), k + context + 1).some((o) => o[0] !== " "));
  const lines: string[] = [];
  ops.forEach((op, k) => {
    if (show[k]) lines.push(`${op[0]} ${op[1]}`);
    else if (show[k - 1]) lines.push("  ...");
  });
  return lines.join("\n");
}
