import { toolSummary } from "./readers";
import { str, type LineReader, type Part } from "./transcript";

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : null);

// Context Codex injects as "user" messages on every session: instructions and environment, not the user's words.
const CODEX_BOILERPLATE = /^\s*(?:<environment_context>|<user_instructions>|<user_shell_command>|# AGENTS\.md instructions for |<turn_aborted>)/;

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b) => {
      const o = obj(b);
      if (!o) return "";
      if (o.type === "input_text" || o.type === "output_text" || o.type === "text") return str(o.text) ?? "";
      if (o.type === "input_image") return "[image]";
      return "";
    })
    .filter(Boolean)
    .join("\n");
}

/** function_call arguments are a JSON string; the shell tool's `command` is an argv array. */
function callSummary(args: unknown): string {
  let parsed: unknown = args;
  if (typeof args === "string") {
    try {
      parsed = JSON.parse(args);
    } catch {
      return args;
    }
  }
  const cmd = obj(parsed)?.command;
  if (Array.isArray(cmd)) return cmd.map(String).join(" ");
  return toolSummary(parsed);
}

/** function_call_output.output: plain text, or a JSON string {output, metadata: {exit_code}}. */
function callOutput(output: unknown): { text: string; isError: boolean } {
  const raw = typeof output === "string" ? output : (str(obj(output)?.content) ?? JSON.stringify(output ?? ""));
  try {
    const j = obj(JSON.parse(raw));
    if (j && typeof j.output === "string") {
      const code = obj(j.metadata)?.exit_code;
      return { text: j.output, isError: typeof code === "number" && code !== 0 };
    }
  } catch {
    /* plain text */
  }
  const m = /^Exit code: (\d+)/.exec(raw);
  return { text: raw, isError: m !== null && m[1] !== "0" };
}

/**
 * OpenAI Codex CLI rollout lines (~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl):
 * `{timestamp, type, payload}` with type session_meta (id, cwd, git), turn_context (cwd, model),
 * response_item (payload.type message | function_call | function_call_output |
 * custom_tool_call | custom_tool_call_output | local_shell_call | reasoning), event_msg
 * (UI events that repeat the response items: skipped so nothing is counted twice) and compacted.
 */
export const readCodexLine: LineReader = (json) => {
  const j = obj(json);
  const payload = obj(j?.payload);
  const base = { parts: [] as Part[], timestamp: str(j?.timestamp), cwd: null as string | null, sessionId: null as string | null };
  if (!j || !payload) return base;
  if (j.type === "session_meta") {
    base.sessionId = str(payload.id);
    base.cwd = str(payload.cwd);
    return base;
  }
  if (j.type === "turn_context") {
    base.cwd = str(payload.cwd);
    return base;
  }
  if (j.type !== "response_item") return base;
  switch (payload.type) {
    case "message": {
      const text = contentText(payload.content).trim();
      if (!text) break;
      if (payload.role === "user" && !CODEX_BOILERPLATE.test(text)) base.parts.push({ kind: "user", text });
      else if (payload.role === "assistant") base.parts.push({ kind: "assistant", text });
      // developer and system messages: the harness's instructions.
      break;
    }
    case "function_call":
    case "custom_tool_call":
      base.parts.push({ kind: "tool_use", tool: str(payload.name) ?? "tool", text: callSummary(payload.arguments ?? payload.input) });
      break;
    case "local_shell_call": {
      const action = obj(payload.action);
      base.parts.push({ kind: "tool_use", tool: "shell", text: callSummary({ command: action?.command }) });
      break;
    }
    case "function_call_output":
    case "custom_tool_call_output": {
      const out = callOutput(payload.output);
      base.parts.push({ kind: "tool_result", text: out.text, isError: out.isError });
      break;
    }
    // reasoning: encrypted or a summary of thinking, not words anyone said.
  }
  return base;
};
