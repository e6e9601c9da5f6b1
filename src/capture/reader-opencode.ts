import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { FlatMessage, FlatSession } from "./flatten";
import { toolSummary } from "./readers";
import type { Part } from "./transcript";
import { readUtf8File } from "../utf8";

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : null);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

function readJson(file: string): Json | null {
  try {
    return obj(JSON.parse(readUtf8File(file)));
  } catch {
    return null; // being written right now: the next run reads it
  }
}

function jsonFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => join(dir, f));
}

const iso = (ms: unknown): string | null => (typeof ms === "number" && Number.isFinite(ms) ? new Date(ms).toISOString() : null);

/** opencode's storage folder: $XDG_DATA_HOME/opencode/storage, by default ~/.local/share/opencode/storage. */
export function opencodeSessionFiles(storage: string): string[] {
  const root = join(storage, "session");
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => jsonFiles(join(root, d.name)));
}

/**
 * One opencode session from its storage (sst/opencode, file storage):
 *   session/<projectID>/<sessionID>.json  {id, projectID, directory, parentID?, title, time}
 *   message/<sessionID>/<messageID>.json  {id, sessionID, role: user | assistant, time: {created, completed?}}
 *   part/<messageID>/<partID>.json        {id, messageID, type: text | tool | reasoning | file |
 *                                           step-start | step-finish | patch | ..., text?, synthetic?,
 *                                           tool?, state?: {status, input, output | error}}
 * Ids sort in creation order. A sub-agent session (parentID) is the harness talking to itself,
 * like Claude Code's sidechains; an assistant message without time.completed is still streaming.
 */
export function readOpencodeSession(storage: string, sessionFile: string): FlatSession | null {
  const session = readJson(sessionFile);
  const sessionId = str(session?.id);
  if (!session || !sessionId || session.parentID) return null;
  const messages: FlatMessage[] = [];
  const infos = jsonFiles(join(storage, "message", sessionId))
    .map(readJson)
    .filter((m): m is Json => m !== null && typeof m.id === "string")
    .sort((a, b) => String(a.id).localeCompare(String(b.id)));
  for (const m of infos) {
    const time = obj(m.time);
    if (m.role === "assistant" && time?.completed === undefined) break;
    const parts: Part[] = [];
    const partFiles = jsonFiles(join(storage, "part", String(m.id)))
      .map(readJson)
      .filter((p): p is Json => p !== null)
      .sort((a, b) => String(a.id).localeCompare(String(b.id)));
    for (const p of partFiles) {
      if (p.type === "text" && p.synthetic !== true) {
        const text = (str(p.text) ?? "").trim();
        if (text) parts.push({ kind: m.role === "user" ? "user" : "assistant", text });
      } else if (p.type === "tool") {
        const state = obj(p.state);
        parts.push({ kind: "tool_use", tool: str(p.tool) ?? "tool", text: toolSummary(state?.input) });
        if (state?.status === "completed") parts.push({ kind: "tool_result", text: str(state.output) ?? "" });
        else if (state?.status === "error") parts.push({ kind: "tool_result", text: str(state.error) ?? "error", isError: true });
      }
      // reasoning, file, step-start/finish, snapshot, patch, agent: not words anyone said.
    }
    messages.push({ key: String(m.id), timestamp: iso(time?.created), parts });
  }
  return { harness: "opencode", sessionId, cwd: str(session.directory), messages };
}
