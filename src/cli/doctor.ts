import { loadConfig } from "../config";
import { parseFlags } from "./args";
import { runChecks, type Check, type Outcome } from "./doctor-checks";

export const DOCTOR_HELP = `memsvc doctor [--json]

Checks the whole chain a coding agent relies on, and says what to do about
each problem:

  server             answers /health (and where it was found: MEMSVC_URL,
                     serverUrl, <home>/server.json, config port, default)
  embedder           which one is active, and that a search (which embeds
                     its query) answers; the offline fallback is a warning
  language model     which one the server uses, and that it answers a tiny
                     request (GET /health/llm); not configured is a warning
  claude code hooks  installed in ~/.claude/settings.json, their program
                     exists, and the server they would call answers
  <harness> hooks    for Codex CLI, Gemini CLI and opencode when found:
                     memsvc's notify, hooks or capture plugin (a warning
                     when missing)
  <harness> mcp      for every harness found: memsvc's MCP server is
                     registered, or the agent cannot call memsvc_get /
                     memsvc_search (a warning)
  mcp /sse, /mcp     an SSE session opens; an initialize on /mcp answers

Exit status: 0 when nothing failed (warnings allowed), 1 when any check
failed, 2 on usage errors.`;

const LABEL: Record<Outcome, string> = { ok: "ok  ", warn: "warn", fail: "FAIL", skip: "skip" };

export async function runDoctor(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, { json: { type: "boolean" } });
  if (values.help) {
    console.log(DOCTOR_HELP);
    return 0;
  }
  const config = loadConfig();
  const checks = await runChecks(config, process.env);
  const failed = checks.filter((c) => c.outcome === "fail").length;
  if (values.json) {
    console.log(JSON.stringify({ ok: failed === 0, checks }, null, 2));
    return failed === 0 ? 0 : 1;
  }
  return printChecks(checks) === 0 ? 0 : 1;
}

/** Prints the checks as doctor does (also at the end of `memsvc setup`); returns how many failed. */
export function printChecks(checks: Check[]): number {
  const failed = checks.filter((c) => c.outcome === "fail").length;
  const width = Math.max(...checks.map((c) => c.name.length));
  for (const c of checks) {
    console.log(`${LABEL[c.outcome]}  ${c.name.padEnd(width)}  ${c.detail}`);
    if (c.advice) console.log(`${" ".repeat(width + 8)}-> ${c.advice}`);
  }
  const warned = checks.filter((c) => c.outcome === "warn").length;
  console.log(
    failed === 0 ? `\nall checks passed${warned ? ` (${warned} warning${warned > 1 ? "s" : ""})` : ""}` : `\n${failed} check${failed > 1 ? "s" : ""} failed`,
  );
  return failed;
}
