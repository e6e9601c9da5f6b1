import { createHash } from "node:crypto";
import { denoise, messageChars, type Message } from "./denoise";
import type { Line, Part } from "./transcript";

/** A slice of a session's unseen delta, shipped as one /distill request. */
export interface Segment {
  /** Byte range of the transcript it covers. */
  start: number;
  end: number;
  /** `<start>-<end>-<hash>`: stable across retries, distinct if the file is ever rewritten. */
  id: string;
  messages: Message[];
  /** Timestamp of its first line: the delta's own date. */
  date: string | null;
  /** Timestamp of its last dated line: where its anchor's commit is looked up. */
  endDate: string | null;
  /** Files its tool calls read or changed, as the tools named them (absolute or cwd-relative). */
  paths: string[];
}

/** Tools whose one argument is a file the session read or changed (Claude Code names; Bash is not parsed). */
export const FILE_TOOLS = new Set(["Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "NotebookRead"]);

function filePaths(parts: readonly Part[]): string[] {
  const out = new Set<string>();
  for (const p of parts)
    if (p.kind === "tool_use" && p.tool && FILE_TOOLS.has(p.tool) && p.text && !p.text.includes("\n") && p.text.length < 1000) out.add(p.text.trim());
  return [...out];
}

/**
 * The server refuses a session_date that is not ISO (400), which would stall
 * the session's watermark forever: anything else is left out (the server then
 * dates the memories today).
 */
function isoOrNull(ts: string | null): string | null {
  if (!ts || !/^\d{4}-\d{2}-\d{2}/.test(ts)) return null;
  const ms = Date.parse(ts);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

export function segmentId(start: number, end: number, messages: readonly Message[]): string {
  return `${start}-${end}-${createHash("sha256").update(JSON.stringify(messages)).digest("hex").slice(0, 12)}`;
}

/**
 * Cuts lines (already read from `start`) into segments of at most `maxChars`
 * denoised characters, on line boundaries. Lines that denoise to nothing ride
 * along with their neighbours; `tailEnd` is where the last line ends, so a
 * quiet tail can be acknowledged without a request.
 */
export function planSegments(lines: readonly Line[], start: number, maxChars: number): { segments: Segment[]; tailEnd: number } {
  const segments: Segment[] = [];
  let segStart = start;
  let parts: Part[] = [];
  let chars = 0;
  let date: string | null = null;
  let endDate: string | null = null;
  let lastEnd = start;
  const close = (end: number) => {
    const messages = denoise(parts);
    if (messages.length > 0) segments.push({ start: segStart, end, id: segmentId(segStart, end, messages), messages, date, endDate, paths: filePaths(parts) });
    segStart = end;
    parts = [];
    chars = 0;
    date = null;
    endDate = null;
  };
  for (const line of lines) {
    const size = line.parts.length ? messageChars(denoise(line.parts)) : 0;
    if (size > 0 && chars > 0 && chars + size > maxChars) close(lastEnd);
    if (size > 0) {
      parts.push(...line.parts);
      chars += size;
      date ??= isoOrNull(line.timestamp);
      endDate = isoOrNull(line.timestamp) ?? endDate;
    }
    lastEnd = line.end;
  }
  if (chars > 0) close(lastEnd);
  return { segments, tailEnd: lastEnd };
}
