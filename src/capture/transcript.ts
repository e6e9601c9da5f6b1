import { openSync, readSync, closeSync, fstatSync, readFileSync } from "node:fs";
import { utf8Problem } from "../utf8";

/**
 * One meaningful piece of a transcript line, as the readers see it. A line
 * may hold several (Claude Code puts text and tool calls in one message).
 */
export interface Part {
  kind: "user" | "assistant" | "tool_use" | "tool_result";
  text: string;
  /** Tool name for tool_use; for tool_result, whether the tool failed. */
  tool?: string;
  isError?: boolean;
}

/** A transcript line, parsed: its parts and where it ends in the file. */
export interface Line {
  parts: Part[];
  timestamp: string | null;
  cwd: string | null;
  sessionId: string | null;
  /** Byte offset just past this line's newline: the watermark after consuming it. */
  end: number;
}

/** flat: the append-only copy of a Gemini CLI or opencode session (see flatten.ts). */
export type Format = "claude" | "generic" | "codex" | "flat";

/** A reader turns one parsed JSON line into parts (an empty list for lines that carry nothing). */
export type LineReader = (json: unknown) => Omit<Line, "end">;

// Strict: a transcript in another encoding would otherwise reach the server (and memories) as U+FFFD.
// Per line it costs no more than Buffer#toString (measured: 53-71 ms vs 58-82 ms for 14 MB of lines).
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Complete lines of a JSONL file from `from` (a byte offset) to `to` (or the
 * end). A last line without its newline is still being written: it is left
 * for the next run. Unparseable lines count as consumed but carry nothing.
 * A line that is not UTF-8 throws NotUtf8Error (src/utf8.ts): the file is
 * refused as a whole, its watermark does not move.
 */
export function readJsonl(file: string, reader: LineReader, from = 0, to?: number): { lines: Line[]; size: number } {
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    const stop = Math.min(to ?? size, size);
    const buf = Buffer.alloc(Math.max(0, stop - from));
    let read = 0;
    while (read < buf.length) {
      const n = readSync(fd, buf, read, buf.length - read, from + read);
      if (n <= 0) break;
      read += n;
    }
    const lines: Line[] = [];
    let start = 0;
    for (let nl = buf.indexOf(10, 0); nl >= 0 && nl < read; nl = buf.indexOf(10, start)) {
      let text: string;
      try {
        text = strictUtf8.decode(buf.subarray(start, nl)).trim();
      } catch {
        // The slow path names the line and byte: read the file again from its start.
        throw utf8Problem(file, readFileSync(file).subarray(0, from + nl)) ?? new Error(`${file}: not UTF-8 text`);
      }
      start = nl + 1;
      const end = from + start;
      if (!text) {
        lines.push({ parts: [], timestamp: null, cwd: null, sessionId: null, end });
        continue;
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        lines.push({ parts: [], timestamp: null, cwd: null, sessionId: null, end });
        continue;
      }
      lines.push({ ...reader(json), end });
    }
    return { lines, size };
  } finally {
    closeSync(fd);
  }
}

/** The first `bytes` of a file as text (format detection must not read a 50 MB transcript). */
export function headOf(file: string, bytes = 64 * 1024): string {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(bytes);
    const n = readSync(fd, buf, 0, bytes, 0);
    return buf.subarray(0, n).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** Guesses the format from the first parseable lines: Claude Code lines carry `type` and `message`, Codex rollout lines `type` and `payload`. */
export function detectFormat(sample: string): Format {
  for (const raw of sample.split("\n").slice(0, 20)) {
    try {
      const j = JSON.parse(raw) as Record<string, unknown>;
      if (j && typeof j === "object" && "type" in j && "payload" in j) return "codex";
      if (j && typeof j === "object" && ("sessionId" in j || ("type" in j && ("message" in j || "summary" in j)))) return "claude";
      if (j && typeof j === "object" && "role" in j) return "generic";
    } catch {
      /* next line */
    }
  }
  return "claude";
}

export const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
