import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../private-files";
import { str, type LineReader, type Part } from "./transcript";

/**
 * Gemini CLI and opencode keep a session as JSON documents rewritten in place,
 * not as an append-only log, so a byte watermark means nothing in them. Their
 * messages are therefore copied, once each and in order, into an append-only
 * "flat" JSONL under <home>/state/capture/flat/ (0600; the transcript's own
 * words, as private as the harness's files), and that file goes through the
 * very same segments, denoising, redaction and watermarks as a Claude Code
 * transcript. One flat line per harness message, keyed by its id.
 */
export interface FlatMessage {
  key: string;
  timestamp: string | null;
  parts: Part[];
}

export interface FlatSession {
  harness: string;
  sessionId: string;
  cwd: string | null;
  /** Complete messages only, in order: an unfinished last message waits for the next run. */
  messages: FlatMessage[];
}

export function flatDir(stateDir: string): string {
  return join(stateDir, "flat");
}

const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 120);

/** Appends the session's messages not yet in its flat file; returns the file. A rewritten history starts the file over. */
export function flatten(dir: string, session: FlatSession): string {
  ensurePrivateDir(dir);
  const file = join(dir, `${safe(session.harness)}-${safe(session.sessionId)}.jsonl`);
  const keys = existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => {
          try {
            return String((JSON.parse(l) as { key?: unknown }).key);
          } catch {
            return "";
          }
        })
    : [];
  const line = (m: FlatMessage) =>
    `${JSON.stringify({ key: m.key, timestamp: m.timestamp, session_id: session.sessionId, cwd: session.cwd, parts: m.parts })}\n`;
  const prefixKept = keys.length <= session.messages.length && keys.every((k, i) => session.messages[i].key === k);
  if (!prefixKept) {
    // Messages were removed or reordered (a /rewind, a deleted message): the shorter or changed file is read afresh.
    writeFileSync(file, session.messages.map(line).join(""), { mode: PRIVATE_FILE_MODE });
  } else if (session.messages.length > keys.length) {
    appendFileSync(file, session.messages.slice(keys.length).map(line).join(""), { mode: PRIVATE_FILE_MODE });
  } else if (!existsSync(file)) {
    writeFileSync(file, "", { mode: PRIVATE_FILE_MODE });
  }
  makePrivate(file);
  return file;
}

const KINDS = new Set(["user", "assistant", "tool_use", "tool_result"]);

/** A flat line back into parts (written by flatten; anything else carries nothing). */
export const readFlatLine: LineReader = (json) => {
  const j = json && typeof json === "object" && !Array.isArray(json) ? (json as Record<string, unknown>) : null;
  const parts: Part[] = [];
  for (const p of Array.isArray(j?.parts) ? (j.parts as unknown[]) : []) {
    const o = p && typeof p === "object" ? (p as Record<string, unknown>) : null;
    if (!o || !KINDS.has(String(o.kind)) || typeof o.text !== "string") continue;
    parts.push({ kind: o.kind as Part["kind"], text: o.text, tool: str(o.tool) ?? undefined, isError: o.isError === true });
  }
  return { parts, timestamp: str(j?.timestamp), cwd: str(j?.cwd), sessionId: str(j?.session_id) };
};
