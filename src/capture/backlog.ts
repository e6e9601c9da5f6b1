import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../private-files";

/**
 * Sessions whose capture is waiting: the server answered 503 (no language
 * model, or the model is down) or did not answer at all. Their watermarks
 * already stay put (watermark.ts); this file only remembers *which* sessions
 * wait and why, so `doctor`, `status`, the dashboard and `memsvc setup --llm`
 * can say "N sessions wait for a language model" and resend exactly those,
 * instead of distilling every old transcript on the machine.
 *
 * Written only under the capture lock (one capture per home at a time), by a
 * temp file and a rename.
 */
export type WaitReason = "no-model" | "model-failed" | "no-server";

export interface WaitingSession {
  /** The transcript capture reads (for Gemini and opencode: its flat copy). */
  file: string;
  format: string | null;
  agent: string | null;
  reason: WaitReason;
  since: string;
  message: string;
}

export interface Backlog {
  sessions: WaitingSession[];
}

export function backlogFile(home: string): string {
  return join(home, "state", "capture", "backlog.json");
}

export function readBacklog(home: string): Backlog {
  const file = backlogFile(home);
  if (!existsSync(file)) return { sessions: [] };
  try {
    const raw = JSON.parse(readFileSync(file, "utf8"));
    const sessions = Array.isArray(raw?.sessions) ? raw.sessions.filter((s: any) => typeof s?.file === "string" && typeof s?.reason === "string") : [];
    // A transcript deleted since it failed waits for nothing.
    return { sessions: sessions.filter((s: WaitingSession) => existsSync(s.file)) };
  } catch {
    return { sessions: [] };
  }
}

/** Applies one capture run's outcome: failed files are added (keeping their first `since`), files that went through are dropped. */
export function updateBacklog(home: string, waiting: Omit<WaitingSession, "since">[], done: string[]): Backlog {
  const current = readBacklog(home);
  const byFile = new Map(current.sessions.map((s) => [s.file, s]));
  for (const f of done) byFile.delete(f);
  const now = new Date().toISOString();
  for (const w of waiting) byFile.set(w.file, { ...w, since: byFile.get(w.file)?.since ?? now });
  const next: Backlog = { sessions: [...byFile.values()] };
  if (next.sessions.length === current.sessions.length && next.sessions.every((s, i) => JSON.stringify(s) === JSON.stringify(current.sessions[i]))) return next;
  const file = backlogFile(home);
  ensurePrivateDir(join(file, ".."));
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(next, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
  makePrivate(temp);
  renameSync(temp, file);
  return next;
}

/** Why a /distill answer (status, message) leaves a session waiting; null when the session is not waiting but broken (4xx). */
export function waitReason(status: number | null, message: string): WaitReason | null {
  if (status === null) return "no-server";
  if (status === 503 && /no language model is configured/i.test(message)) return "no-model";
  if (status >= 500) return "model-failed";
  return null;
}

/** Counts by reason, for doctor, status and the dashboard. */
export function backlogSummary(backlog: Backlog): { total: number; noModel: number; modelFailed: number; noServer: number } {
  const by = (r: WaitReason) => backlog.sessions.filter((s) => s.reason === r).length;
  return { total: backlog.sessions.length, noModel: by("no-model"), modelFailed: by("model-failed"), noServer: by("no-server") };
}
