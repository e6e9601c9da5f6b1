/** The coding-agent harnesses memsvc knows how to wire (hooks or a plugin for capture and recall, plus its MCP server). */
export type HarnessId = "claude-code" | "codex" | "gemini" | "opencode";
export const HARNESS_IDS: readonly HarnessId[] = ["claude-code", "codex", "gemini", "opencode"];

export interface HarnessInfo {
  id: HarnessId;
  name: string;
  found: boolean;
  /** What showed it is there (its folder, its CLI on PATH), or where was looked. */
  evidence: string;
}

/** One file's planned change. `before`/`after` null: absent / delete. */
export interface FileChange {
  file: string;
  before: string | null;
  after: string | null;
  /** One line per thing that changes, for the user. */
  summary: string[];
  harness: HarnessId;
  action: "install" | "uninstall";
  /** Uninstall of an untouched file: copy these bytes back exactly rather than writing `after`. */
  restoreFrom?: string;
  /** Folders install created for this file: removed on uninstall when empty. */
  removeDirs?: string[];
}

export interface WiringCheck {
  hooks: "ok" | "missing" | "partial";
  mcp: "ok" | "missing";
  detail: string;
  advice: string;
}

/** The command that runs this memsvc, split: `VAR=value` words become env, the rest is argv. */
export interface Invocation {
  program: string[];
  env: Record<string, string>;
}

/** Thrown when a harness file cannot be read as its format: the message is fit for the user, nothing was changed. */
export class WiringError extends Error {}
