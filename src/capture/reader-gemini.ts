import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { FlatMessage, FlatSession } from "./flatten";
import { toolSummary } from "./readers";
import type { Part } from "./transcript";
import { readUtf8File } from "../utf8";

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : null);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

// A tool call still running or awaiting approval: its message is not finished.
const DONE = new Set(["success", "error", "cancelled"]);

/** Message content: a string in older releases, a list of genai parts ({text}, {functionResponse}...) in newer ones. */
function partsText(content: unknown): string {
  if (typeof content === "string") return content;
  const list = Array.isArray(content) ? content : content ? [content] : [];
  return list
    .map((p) => {
      if (typeof p === "string") return p;
      const o = obj(p);
      if (!o) return "";
      if (typeof o.text === "string" && o.thought !== true) return o.text;
      const response = obj(obj(o.functionResponse)?.response);
      if (response) return str(response.output) ?? str(response.error) ?? JSON.stringify(response);
      return "";
    })
    .filter(Boolean)
    .join("\n");
}

/**
 * A Gemini CLI chat recording (~/.gemini/tmp/<project>/chats/session-<date>-<id>.json,
 * written by its ChatRecordingService): {sessionId, projectHash, startTime, lastUpdated,
 * messages: [{id, timestamp, type: user | gemini | info | error | warning, content,
 * toolCalls?: [{id, name, args, result, status}], thoughts?, tokens?}]}. info, error and
 * warning are the CLI's own notices; thoughts are not words anyone said.
 * Returns null for a file that is not (yet) a whole recording.
 */
export function readGeminiSession(file: string): FlatSession | null {
  let doc: Json | null;
  try {
    doc = obj(JSON.parse(readUtf8File(file)));
  } catch {
    return null; // being rewritten right now: the next run reads it
  }
  if (!doc || !Array.isArray(doc.messages)) return null;
  const sessionId = str(doc.sessionId) ?? file.replace(/^.*[\\/]/, "").replace(/\.json$/, "");
  const messages: FlatMessage[] = [];
  for (const [i, raw] of (doc.messages as unknown[]).entries()) {
    const m = obj(raw);
    if (!m) continue;
    const parts: Part[] = [];
    const text = partsText(m.content).trim();
    if (m.type === "user") {
      // Slash commands (/clear, /chat save) drive the CLI, they are not the user's words.
      if (text && !/^\/[a-z]/.test(text)) parts.push({ kind: "user", text });
    } else if (m.type === "gemini") {
      const calls = Array.isArray(m.toolCalls) ? (m.toolCalls as unknown[]).map(obj).filter((c): c is Json => c !== null) : [];
      if (calls.some((c) => !DONE.has(String(c.status)))) break;
      if (text) parts.push({ kind: "assistant", text });
      for (const c of calls) {
        parts.push({ kind: "tool_use", tool: str(c.name) ?? "tool", text: toolSummary(c.args) });
        const result = partsText(c.result) || str(c.resultDisplay) || "";
        parts.push({ kind: "tool_result", text: result, isError: c.status === "error" });
      }
    }
    messages.push({ key: str(m.id) ?? String(i), timestamp: str(m.timestamp), parts });
  }
  return { harness: "gemini", sessionId, cwd: projectRoot(file), messages };
}

/** Newer Gemini CLI releases record the project's folder in <project dir>/.project_root; older ones only hash it. */
function projectRoot(file: string): string | null {
  const marker = join(dirname(dirname(file)), ".project_root");
  if (!existsSync(marker)) return null;
  try {
    return readFileSync(marker, "utf8").trim() || null;
  } catch {
    return null;
  }
}
