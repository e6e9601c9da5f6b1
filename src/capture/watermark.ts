import { createHash } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import { ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../private-files";

/** A segment planned but not yet acknowledged: resent with the same boundaries and id. */
export interface PendingSegment {
  start: number;
  end: number;
  id: string;
}

/**
 * Per-session capture state in <home>/state/capture/. `offset` is the
 * watermark: bytes of the transcript the server has acknowledged (2xx).
 * `pending` keeps the plan of unacknowledged segments so a retry sends the
 * very same segments even when the transcript has grown meanwhile.
 */
export interface SessionState {
  file: string;
  sessionId: string;
  project: string | null;
  offset: number;
  pending: PendingSegment[];
  updatedAt: string;
}

export function stateDir(home: string): string {
  return join(home, "state", "capture");
}

export function stateFile(dir: string, transcript: string): string {
  return join(dir, `${createHash("sha256").update(resolve(transcript)).digest("hex").slice(0, 20)}.json`);
}

export function readState(dir: string, transcript: string): SessionState | null {
  const file = stateFile(dir, transcript);
  if (!existsSync(file)) return null;
  try {
    const s = JSON.parse(readFileSync(file, "utf8")) as SessionState;
    if (typeof s.offset !== "number" || !Array.isArray(s.pending)) return null;
    return s;
  } catch {
    // A torn write cannot happen (rename), but a hand-edited file can: start over, dedup covers it.
    return null;
  }
}

/** Written to a temp file and renamed: a crash leaves the old state or the new one. */
export function writeState(dir: string, state: SessionState): void {
  ensurePrivateDir(dir);
  const file = stateFile(dir, state.file);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify({ ...state, updatedAt: new Date().toISOString() }, null, 2), { mode: PRIVATE_FILE_MODE });
  makePrivate(temp);
  renameSync(temp, file);
}

/**
 * One capture at a time per home (the pre-compact and session-end hooks may
 * both start one). Returns a release function, or null when another live
 * process holds the lock.
 */
export function acquireLock(dir: string): (() => void) | null {
  ensurePrivateDir(dir);
  const file = join(dir, "capture.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, "wx", PRIVATE_FILE_MODE);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const pid = Number(readFileSync(file, "utf8").trim());
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) return null;
      rmSync(file, { force: true }); // left by a crashed run
    }
  }
  return null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
