import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import type { HarnessId, Invocation, WiringCheck } from "./types";

/** One planned file edit before it becomes a FileChange (no-ops are dropped by the caller). */
export interface Edit {
  file: string;
  before: string | null;
  after: string | null;
  summary: string[];
}

export interface WireOptions {
  env: NodeJS.ProcessEnv;
  inv: Invocation;
  /** Claude Code only: another settings.json (e.g. a project's .claude/settings.json). */
  claudeSettings?: string;
}

/** What each harness module provides; index.ts turns it into the public plan/apply/check surface. */
export interface HarnessModule {
  id: HarnessId;
  name: string;
  /** Its CLI's name on PATH. */
  cli: string;
  /** Folders whose existence shows the harness is installed. */
  homes(env: NodeJS.ProcessEnv): string[];
  /** Every file install may write (uninstall also looks at each). */
  files(env: NodeJS.ProcessEnv, claudeSettings?: string): string[];
  /** Install edits computed from the files as they are now. */
  wire(opts: WireOptions): Edit[];
  /** The file's text without memsvc's entries (null: the whole file is memsvc's, delete it); `summary` says what went. */
  strip(file: string, text: string, env: NodeJS.ProcessEnv): { after: string | null; summary: string[] };
  /** Whether what is left of a file memsvc created holds nothing of the user's (then uninstall deletes it). */
  isEmpty(file: string, text: string): boolean;
  check(env: NodeJS.ProcessEnv): WiringCheck;
}

export function userHome(env: NodeJS.ProcessEnv): string {
  return env.HOME && env.HOME.length > 0 ? env.HOME : env.USERPROFILE && env.USERPROFILE.length > 0 ? env.USERPROFILE : homedir();
}

export function readText(file: string): string | null {
  return existsSync(file) ? readFileSync(file, "utf8") : null;
}
