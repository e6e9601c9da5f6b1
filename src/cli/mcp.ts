import { loadConfig } from "../config";
import { runBridge } from "../mcp/stdio-bridge";
import { parseFlags } from "./args";

export const MCP_HELP = `memsvc mcp

An MCP server on stdin/stdout for clients that only launch stdio servers
(Claude Code, Codex CLI, Gemini CLI, opencode). It forwards tools/list and
tools/call to the running memsvc server's /mcp endpoint and passes on its
instructions. Register it as the command \`memsvc mcp\` (README: MCP tools).

The server is found as \`memsvc status\` finds it: MEMSVC_URL, serverUrl in
config.json, the running server's <home>/server.json, host/port in
config.json, 127.0.0.1:8787; the token in config.json is sent when set.
When no server answers, the tools are still listed and every call returns
an error saying how to start it; the next call tries again.`;

export async function runMcp(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, {});
  if (values.help) {
    console.log(MCP_HELP);
    return 0;
  }
  loadConfig(); // a broken config.json is reported now, not on the first call
  await runBridge({ config: () => loadConfig() });
  return 0;
}
