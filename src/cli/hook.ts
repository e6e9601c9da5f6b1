import { spawn } from "node:child_process";
import { handleHook, HOOK_BUDGET_MS, HOOK_EVENTS, type HookEvent, type HookHarness, type HookInput } from "../capture/hooks";
import { loadConfig } from "../config";
import { LLM_CHILD_ENV } from "../llm/child-env";

export const HOOK_HELP = `memsvc hook <event> [--harness gemini]
memsvc hook codex-notify [--home <dir>] [--then <program> [args...]] <json>

Harness hook handler. Reads the hook JSON on stdin (Claude Code's format:
session_id, transcript_path, cwd, prompt) and prints what the agent should
see on stdout. With --harness gemini it answers as a Gemini CLI hook: a JSON
object whose hookSpecificOutput.additionalContext carries the text
(SessionStart, BeforeAgent), and capture finds Gemini's sessions itself.

  session-start   the identity sections (when "claude-code" is listed in
                  identityClients) and the learnings block; then, within
                  its budget, \`memsvc stale\` for the session's folder
  user-prompt     the memory recall index for this prompt, when one is relevant
  pre-compact     resets the recall session and runs \`memsvc capture\` for
  session-end     this transcript in the background (Claude Code; Gemini CLI's
                  SessionEnd hook sends the same fields)
  codex-notify    Codex CLI's \`notify\` program: on agent-turn-complete (JSON
                  as the last argument) runs \`memsvc capture --harness codex\`
                  in the background. --home names the service home (Codex
                  runs notify without a shell, so no MEMSVC_HOME=...);
                  --then runs the notify program you had before with the
                  same JSON argument (\`memsvc hooks install\` chains it)

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

/** Gemini CLI reads a JSON object on stdout; the text goes to the agent as additionalContext. */
const GEMINI_EVENT: Partial<Record<HookEvent, string>> = { "session-start": "SessionStart", "user-prompt": "BeforeAgent" };

function geminiOutput(event: HookEvent, text: string): string {
  const name = GEMINI_EVENT[event];
  return JSON.stringify(name && text ? { hookSpecificOutput: { hookEventName: name, additionalContext: text } } : {});
}

/** `codex-notify [--home DIR] [--then argv...] <json>`: the payload is always last (Codex appends it). */
function codexNotifyArgs(args: string[]): { home: string | null; chain: string[]; payload: string } {
  let i = 0;
  let home: string | null = null;
  if (args[0] === "--home" && args.length > 2) {
    home = args[1]!;
    i = 2;
  }
  const payload = args.at(-1) ?? "";
  const chain = args[i] === "--then" ? args.slice(i + 1, -1) : [];
  return { home, chain, payload };
}

/** The user's own notify program, run detached with the same payload Codex gave memsvc; it must not wait on memsvc, nor memsvc on it. */
function runChained(chain: string[], payload: string): void {
  if (chain.length === 0) return;
  try {
    const child = spawn(chain[0]!, [...chain.slice(1), payload], { detached: true, stdio: "ignore" });
    child.on("error", () => {});
    child.unref();
  } catch {
    /* a missing program is the user's notify failing, as it would without memsvc */
  }
}

export async function runHook(argv: string[]): Promise<number> {
  const [event, ...rest] = argv;
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
  const harness: HookHarness = rest[0] === "--harness" && rest[1] === "gemini" ? "gemini" : "claude-code";
  try {
    let raw: string;
    if (event === "codex-notify") {
      // Codex's notify passes its JSON as the last argument and leaves stdin alone.
      const args = codexNotifyArgs(rest);
      runChained(args.chain, args.payload);
      if (args.home) process.env.MEMSVC_HOME = args.home;
      raw = args.payload;
    } else raw = await readStdin(deadline);
    let input: HookInput = {};
    try {
      const parsed = raw.trim() ? JSON.parse(raw) : {};
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) input = parsed as HookInput;
    } catch {
      /* no usable input: handlers do what they can without it */
    }
    const config = loadConfig();
    const text = await handleHook(event as HookEvent, input, config, deadline, harness);
    const out = harness === "gemini" ? geminiOutput(event as HookEvent, text) : text;
    if (out && Date.now() < deadline + 50) {
      const line = out.endsWith("\n") ? out : `${out}\n`;
      // Flushed before main() exits the process, or a pipe could lose the tail.
      await new Promise<void>((resolve) => process.stdout.write(line, () => resolve()));
    }
  } catch {
    /* silence: the agent must never see a hook failure */
  }
  return 0;
}
