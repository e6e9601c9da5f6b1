import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";

/**
 * Everything memsvc writes holds private data (memories, tokens, transcripts),
 * so folders are 0700 and files 0600 whatever the umask: the `mode` argument
 * of open/mkdir is filtered by the umask, hence the explicit chmod after each.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates `dir` (and missing parents) and makes each folder it created 0700.
 * Folders that already existed are left alone unless `tighten` is set: a
 * backup written to /tmp must not chmod /tmp. The service home and its own
 * subfolders pass `tighten`, so a home made by an older release is fixed too.
 */
export function ensurePrivateDir(dir: string, opts: { tighten?: boolean } = {}): void {
  const first = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first !== undefined) {
    let path = first;
    chmodQuietly(path, PRIVATE_DIR_MODE);
    for (const part of relative(first, dir).split(sep).filter(Boolean)) {
      path = join(path, part);
      chmodQuietly(path, PRIVATE_DIR_MODE);
    }
  } else if (opts.tighten) {
    chmodQuietly(dir, PRIVATE_DIR_MODE);
  }
}

/** Creates an empty 0600 file if none exists (SQLite keeps the mode of a file it finds). */
export function createPrivateFile(file: string): void {
  if (!existsSync(file)) closeSync(openSync(file, "a", PRIVATE_FILE_MODE));
  chmodQuietly(file, PRIVATE_FILE_MODE);
}

/** 0600 if the file exists; a missing file is not an error. */
export function makePrivate(file: string): void {
  chmodQuietly(file, PRIVATE_FILE_MODE);
}

function chmodQuietly(path: string, mode: number): void {
  try {
    chmodSync(path, mode);
  } catch {
    // Absent, or a read-only home: opening it reports the real problem to the user.
  }
}

/**
 * Before SQLite opens `file`: a private folder and an empty 0600 database
 * file. SQLite gives the WAL and SHM files the mode of the database file, so
 * all three stay private whatever the umask.
 */
export function prepareDatabaseFile(file: string): void {
  ensurePrivateDir(dirname(file));
  try {
    createPrivateFile(file);
  } catch {
    // An unwritable folder: SQLite's own open reports it, with the error the storage mapping knows.
  }
}

/** After opening: WAL and SHM files left by a release that did not set modes are tightened too. */
export function tightenDatabaseFiles(file: string): void {
  for (const suffix of ["-wal", "-shm"]) makePrivate(file + suffix);
}
