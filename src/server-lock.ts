import { Database } from "bun:sqlite";
import { closeSync, existsSync, openSync, readSync } from "node:fs";
import { join } from "node:path";
import { prepareSqlite } from "./platform/natives";
import { createPrivateFile, ensurePrivateDir } from "./private-files";
import { processAlive, readRuntimeFile, removeRuntimeFile } from "./runtime-file";

/**
 * One server per home. `<home>/server.lock` is a tiny SQLite file that the
 * running server holds with an exclusive lock for its whole life
 * (locking_mode=EXCLUSIVE). SQLite takes that lock with fcntl on macOS and
 * Linux and LockFileEx on Windows, so:
 *   - two servers started at the same instant cannot both win (the kernel
 *     decides, not a check-then-create in our code);
 *   - a server killed with -9 holds nothing: the kernel drops its locks with
 *     the process, so there is no stale lock to detect or take over;
 *   - the loser never writes the file, so it cannot spoil the winner's state.
 * The winner's pid sits in the SQLite header's user_version field (bytes
 * 60-63, big-endian), which a loser reads with a plain read(): SQLite locks
 * bytes at the 1 GiB mark, never the header, so the read is never blocked.
 */
export const LOCK_FILE = "server.lock";
/** How long a loser waits for a holder that is still starting to name its URL in server.json. */
const HOLDER_URL_WAIT_MS = 5_000;

export interface ServerLock {
  file: string;
  /** False on a home this process cannot write: see tryLock. */
  held: boolean;
  /** Why the lock is not held. */
  note?: string;
  release(): void;
}

export interface LockHolder {
  pid: number | null;
  url: string | null;
}

export class LockUnusableError extends Error {}

// Held here as well as by the caller: a Database that is garbage-collected closes and drops the lock.
const held: Database[] = [];

export function lockFile(home: string): string {
  return join(home, LOCK_FILE);
}

/**
 * The lock, or null when another live process holds it. Throws
 * LockUnusableError when the file cannot serve as a lock. A home this process
 * cannot write gives an unheld lock: no server can open its database there
 * anyway, and the storage layer says so in its own words.
 */
export function tryLock(home: string): ServerLock | null {
  ensurePrivateDir(home, { tighten: true });
  const file = lockFile(home);
  const unheld = (why: string): ServerLock => ({ file, held: false, note: `cannot lock ${file} (${why})`, release() {} });
  try {
    createPrivateFile(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "";
    if (code === "EROFS" || code === "EACCES" || code === "EPERM") return unheld(code);
    throw e;
  }
  // macOS: the SQLite library must be chosen before the first Database opens.
  prepareSqlite();
  let db: Database;
  try {
    db = new Database(file);
  } catch (e) {
    throw new LockUnusableError(`cannot open ${file}: ${(e as Error).message}`);
  }
  try {
    // No journal file: the only write is one header field, and a torn one is harmless.
    db.exec("PRAGMA journal_mode=MEMORY");
    db.exec("PRAGMA locking_mode=EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec(`PRAGMA user_version=${process.pid | 0}`);
    db.exec("COMMIT");
  } catch (e) {
    db.close();
    const code = (e as { code?: string }).code ?? "";
    if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) return null;
    if (code.startsWith("SQLITE_READONLY")) return unheld("read-only");
    throw new LockUnusableError(`${file} cannot be used as the server lock (${(e as Error).message}); if no memsvc server runs for this home, delete it`);
  }
  held.push(db);
  return {
    file,
    held: true,
    release() {
      const i = held.indexOf(db);
      if (i >= 0) held.splice(i, 1);
      db.close();
    },
  };
}

/** The pid the lock file names (0 or garbage reads as null). */
export function lockPid(home: string): number | null {
  const file = lockFile(home);
  if (!existsSync(file)) return null;
  let fd: number | null = null;
  try {
    fd = openSync(file, "r");
    const buf = Buffer.alloc(4);
    if (readSync(fd, buf, 0, 4, 60) !== 4) return null;
    const pid = buf.readInt32BE(0);
    return pid > 0 ? pid : null;
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/**
 * Who holds the lock: its pid (once written) and its URL (once it listens).
 * A holder that is still starting is waited for up to `waitMs`, so the
 * refusal can name the address clients should use.
 */
export async function lockHolder(home: string, waitMs = HOLDER_URL_WAIT_MS): Promise<LockHolder> {
  const until = Date.now() + waitMs;
  for (;;) {
    const pid = lockPid(home);
    const info = readRuntimeFile(home);
    if (pid !== null && processAlive(pid) && info?.pid === pid) return { pid, url: info.url };
    if (Date.now() >= until) return { pid: pid !== null && processAlive(pid) ? pid : null, url: null };
    await Bun.sleep(50);
  }
}

/** One line for the refused second server. */
export function refusalLine(home: string, holder: LockHolder): string {
  const who = holder.pid !== null ? `pid ${holder.pid}` : "pid unknown";
  const where = holder.url ?? "still starting, no address yet";
  return `a memsvc server for ${home} is already running (${who}, ${where}); stop it first, or use another MEMSVC_HOME`;
}

/**
 * After the lock is won, any server.json naming another pid was left by a
 * server that died without cleaning up (a live one would hold the lock):
 * remove it so clients stop using it before this server writes its own.
 */
export function clearStaleRuntimeFile(home: string): void {
  const info = readRuntimeFile(home);
  if (info && info.pid !== process.pid) removeRuntimeFile(home, info.pid);
}
