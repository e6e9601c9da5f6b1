import { closeSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { unavailable } from "../errors";
import { ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../private-files";

/**
 * Calls to a harness CLI per local day, in <home>/state/llm-calls.json. The
 * server and `memsvc nightly` may both call at once, so every read-increment-
 * write runs under a lock file (created exclusively, holding the owner's pid)
 * and the file is replaced by rename: a crash leaves the old count or the new.
 */

export const CALLS_FILE = "llm-calls.json";
const LOCK_FILE = "llm-calls.lock";
/** The section under the lock takes microseconds; waiting longer than this means something is wrong. */
const LOCK_WAIT_MS = 5_000;

export interface CallCount {
  /** Local date, YYYY-MM-DD. */
  day: string;
  calls: number;
}

/** The local calendar day (the user's "today", not UTC's). */
export function localDay(at: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;
}

/** Today's count as stored; 0 when the file is absent, unreadable or from another day. */
export function readCallCount(stateDir: string, now: Date = new Date()): CallCount {
  const day = localDay(now);
  try {
    const raw = JSON.parse(readFileSync(join(stateDir, CALLS_FILE), "utf8")) as Partial<CallCount>;
    if (raw.day === day && Number.isInteger(raw.calls) && (raw.calls as number) >= 0) return { day, calls: raw.calls as number };
  } catch {
    /* absent or hand-edited: today starts at 0 */
  }
  return { day, calls: 0 };
}

/**
 * Counts one call against today's cap before it is made; throws `unavailable`
 * (capture keeps its watermark and retries later) when `cap` calls were
 * already made today. `who` names the CLI in the message.
 */
export async function reserveCall(stateDir: string, cap: number, who: string, now: () => Date = () => new Date()): Promise<CallCount> {
  ensurePrivateDir(stateDir);
  const release = await acquire(join(stateDir, LOCK_FILE));
  try {
    const current = readCallCount(stateDir, now());
    if (current.calls >= cap) {
      throw unavailable(
        `daily cap of ${cap} calls to ${who} reached (${current.day}); raise llm.dailyCap in config.json to allow more, or capture resumes tomorrow`,
      );
    }
    const next = { day: current.day, calls: current.calls + 1 };
    const file = join(stateDir, CALLS_FILE);
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(next)}\n`, { mode: PRIVATE_FILE_MODE });
    makePrivate(temp);
    renameSync(temp, file);
    return next;
  } finally {
    release();
  }
}

async function acquire(lock: string): Promise<() => void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(lock, "wx", PRIVATE_FILE_MODE);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lock, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw unavailable(`cannot count language model calls in ${lock}: ${(e as Error).message}`);
    }
    const owner = ownerOf(lock);
    // A process that died inside the section left its lock behind; the section is too short for this to race in practice.
    if (owner !== null && !alive(owner)) {
      rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline)
      throw unavailable(`the language model call counter is locked by process ${owner ?? "?"} (${lock}); remove the file if no memsvc process is running`);
    await Bun.sleep(2 + Math.random() * 8);
  }
}

function ownerOf(lock: string): number | null {
  try {
    const pid = Number(readFileSync(lock, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
