import { shellQuote } from "../../capture/claude-settings";
import type { Invocation } from "./types";

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;

/** Splits memsvc's own argv (as selfArgv gives it) into the program words and the `VAR=value` words before them. */
export function invocation(command: readonly string[]): Invocation {
  const env: Record<string, string> = {};
  let i = 0;
  for (; i < command.length; i++) {
    const m = ASSIGNMENT.exec(command[i]!);
    if (!m) break;
    env[m[1]!] = m[2]!;
  }
  const program = command.slice(i);
  if (program.length === 0) throw new Error("the memsvc command is empty");
  return { program, env };
}

/** A shell command line (Claude Code and Gemini CLI run hook commands through a shell): assignments first, every word quoted. */
export function shellLine(inv: Invocation, args: readonly string[]): string {
  const assignments = Object.entries(inv.env).map(([k, v]) => `${k}=${shellQuote(v)}`);
  return [...assignments, ...[...inv.program, ...args].map(shellQuote)].join(" ");
}

/** The program path written into harness configs that exec argv directly (MCP entries, Codex's notify). */
export function execParts(inv: Invocation, args: readonly string[]): { command: string; args: string[] } {
  return { command: inv.program[0]!, args: [...inv.program.slice(1), ...args] };
}
