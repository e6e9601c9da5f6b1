import { CAPTURE_MESSAGE_MAX_CHARS, CAPTURE_TOOL_ERROR_CHARS, CAPTURE_TOOL_INPUT_CHARS, CAPTURE_TOOL_OUTPUT_CHARS } from "./tuning";
import { redactOwn } from "../core/secrets";
import type { Part } from "./transcript";

export interface Message {
  role: "user" | "assistant" | "tool";
  content: string;
}

// Bookkeeping tools: their calls say nothing about the work.
const SILENT_TOOLS = new Set(["TodoWrite", "TodoRead"]);
// Tools whose results say nothing about the work ("Todos have been modified successfully").
const SILENT_RESULTS = /^(?:Todos have been modified successfully|The file .* has been (?:updated|created)|File created successfully|Updated task)/;

function cut(text: string, max: number): string {
  const t = text.trim();
  if (t.length <= max) return t;
  return `${t.slice(0, max).trimEnd()} […${t.length - max} chars cut]`;
}

/** Head and tail of a long human or agent message: pasted logs keep their first and last lines. */
function headTail(text: string, max: number): string {
  const t = text.trim();
  if (t.length <= max) return t;
  const head = Math.floor(max * 0.75);
  const tail = max - head;
  return `${t.slice(0, head).trimEnd()}\n[…${t.length - max} chars cut]\n${t.slice(t.length - tail).trimStart()}`;
}

/** One line per tool call, truncated: what was done, not its arguments in bulk. */
function renderPart(p: Part): Message | null {
  switch (p.kind) {
    case "user":
    case "assistant":
      return { role: p.kind, content: headTail(p.text, CAPTURE_MESSAGE_MAX_CHARS) };
    case "tool_use":
      if (SILENT_TOOLS.has(p.tool ?? "")) return null;
      return { role: "tool", content: `[${p.tool ?? "tool"}] ${cut(p.text.replace(/\s+/g, " "), CAPTURE_TOOL_INPUT_CHARS)}` };
    case "tool_result": {
      const text = p.text.trim();
      if (!text || SILENT_RESULTS.test(text)) return null;
      return { role: "tool", content: `${p.isError ? "[error] " : "[result] "}${cut(text, p.isError ? CAPTURE_TOOL_ERROR_CHARS : CAPTURE_TOOL_OUTPUT_CHARS)}` };
    }
  }
}

/**
 * Denoises parts into messages: human and agent words kept, tool calls as
 * one-line summaries, tool output cut to its head, consecutive messages of
 * the same role joined. Secrets are redacted here already, so they never
 * leave the machine (the server redacts again).
 */
export function denoise(parts: readonly Part[]): Message[] {
  const out: Message[] = [];
  for (const p of parts) {
    const rendered = renderPart(p);
    if (!rendered?.content) continue;
    const m = { ...rendered, content: redactOwn(rendered.content).text };
    const last = out.at(-1);
    if (last && last.role === m.role) last.content += `\n${m.content}`;
    else out.push({ ...m });
  }
  return out;
}

/** Denoised characters of a message list (what the server receives, give or take JSON quoting). */
export const messageChars = (messages: readonly Message[]) => messages.reduce((n, m) => n + m.content.length + m.role.length + 2, 0);
