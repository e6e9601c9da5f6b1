import { memsvcProgramLength } from "../../capture/claude-settings";

/** argv runs `memsvc mcp` (this memsvc's executable, or bun with src/main.ts), nothing more. */
export function isMemsvcMcpArgv(words: readonly unknown[]): boolean {
  if (!words.every((w) => typeof w === "string")) return false;
  const n = memsvcProgramLength(words as string[]);
  return n > 0 && words.length === n + 1 && words[n] === "mcp";
}

/** A `{ command, args }` MCP entry (Claude Code, Gemini CLI, Codex) that memsvc wrote. */
export function isOurCommandEntry(entry: unknown): boolean {
  if (!entry || typeof entry !== "object") return false;
  const e = entry as { command?: unknown; args?: unknown };
  return typeof e.command === "string" && Array.isArray(e.args) && isMemsvcMcpArgv([e.command, ...e.args]);
}

/** A remote entry (url) the user pointed at some memsvc server: install leaves it alone, it already gives the agent the tools. */
export function isRemoteEntry(entry: unknown): boolean {
  return !!entry && typeof entry === "object" && typeof (entry as { url?: unknown }).url === "string";
}

export const MCP_NAME = "memsvc";
