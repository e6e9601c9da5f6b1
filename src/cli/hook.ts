import { handleHook, HOOK_BUDGET_MS, HOOK_EVENTS, type HookEvent, type HookInput } from "../capture/hooks";
import { loadConfig } from "../config";
import { LLM_CHILD_ENV } from "../llm/child-env";

export const HOOK_HELP = `memsvc hook <event>

Harness hook handler. Reads the hook JSON on stdin (Claude Code's format:
session_id, transcript_path, cwd, prompt) and prints what the agent should
see on stdout.

  session-start   the identity sections (when "claude-code" is listed in
                  identityClients) and the learnings block; then, within
                  its budget, \`memsvc stale\` for the session's folder
  user-prompt     the memory recall index for this prompt, when one is relevant
  pre-compact     resets the recall session and runs \`memsvc capture\` for
  session-end     this transcript in the background (Claude Code; Gemini CLI's
                  SessionEnd hook sends the same fields)
  codex-notify    Codex CLI's \`notify\` program: on agent-turn-complete (JSON
                  as the last argument) runs \`memsvc capture --harness codex\`
                  in the background

A hook never blocks or breaks the agent: it talks to the local server
without a token, gives up after a hard time budget (under 1 s for
user-prompt), and prints nothing and exits 0 on any failure. It finds the
server as \`memsvc status\` does: MEMSVC_URL, serverUrl in config.json, the
running server's <home>/server.json, host/port in config.json, 127.0.0.1:8787.`;

async function readStdin(deadline: number): Promise<string> {
  if (process.stdin.isTTY) return "";
  const text = Bun.stdin.text();
  const timeout = new Promise<string>((resolve) => setTimeout(() => resolve(""), Math.max(0, deadline - Date.now())).unref());
  return Promise.race([text, timeout]);
}

export async function runHook(argv: string[]): Promise<number> {
  const [event] = argv;
  if (event === "--help" || event === "-h" || event === undefined) {
    console.log(HOOK_HELP);
    return event === undefined ? 2 : 0;
  }
  if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
    // Still exit 0: a typo in the harness config must not break the agent's session.
    console.error(`memsvc hook: unknown event "${event}" (known: ${HOOK_EVENTS.join(", ")})`);
    return 0;
  }
  // A harness session memsvc itself started as its language model: not the user's work.
  if (process.env[LLM_CHILD_ENV] === "1") return 0;
  const started = Date.now();
  const budget = HOOK_BUDGET_MS[event as HookEvent];
  const deadline = started + budget;
  // Whatever happens below, the process is gone when the budget is spent.
  setTimeout(() => process.exit(0), budget + 50).unref();
  try {
    // Codex's notify passes its JSON as the last argument and leaves stdin alone.
    const raw = event === "codex-notify" ? (argv.at(-1) ?? "") : await readStdin(deadline);
    let input: HookInput = {};
    try {
      const parsed = raw.trim() ? JSON.parse(raw) : {};
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) input = parsed as HookInput;
    } catch {
      /* no usable input: handlers do what they can without it */
    }
    const config = loadConfig();
    const text = await handleHook(event as HookEvent, input, config, deadline);
    if (text && Date.now() < deadline + 50) {
      const line = text.endsWith("\n") ? text : `${text}\n`;
      // Flushed before main() exits the process, or a pipe could lose the tail.
      await new Promise<void>((resolve) => process.stdout.write(line, () => resolve()));
    }
  } catch {
    /* silence: the agent must never see a hook failure */
  }
  return 0;
}
