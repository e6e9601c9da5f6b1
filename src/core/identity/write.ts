import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, linkSync, openSync, readdirSync, readFileSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import { conflict } from "../../errors";
import { agentFolders, ensureDirInside, fsyncDir, lstatOrNull, removeQuietly, type Warn } from "./files";

/**
 * Writing several identity sections as one unit, across a crash too.
 *
 * A PUT goes through these steps, each made durable before the next:
 *   1. every body is written to a fsynced temp file; each existing target
 *      gets a hard-link backup (nothing visible has changed yet);
 *   2. a journal listing the temp -> target renames (and backups) is written
 *      to a temp name, fsynced and renamed into place: the commit point;
 *   3. the temps are renamed over their targets;
 *   4. the backups and then the journal are removed.
 * If the process dies, `recoverIdentity` at the next start finishes the job:
 * a journal in state "forward" means every rename is completed (a temp that
 * is gone was already renamed: temp names are unique and were fsynced before
 * the commit); no journal means the PUT never committed, so its temps and
 * backups are deleted and the old files stay. An in-process failure during
 * step 3 rewrites the journal to state "back" before restoring the backups,
 * so a crash during that rollback also ends with the old files.
 *
 * Names of our own files: `.<section>.md.<pid>.<hex>.tmp|bak` and
 * `.put.<pid>.<hex>.journal[.tmp]`. The pid lets a starting server leave
 * alone the files of another live process writing the same folder.
 */

interface JournalEntry {
  /** File names inside the journal's folder. */
  temp: string;
  target: string;
  backup: string | null;
}

interface Journal {
  state: "forward" | "back";
  entries: JournalEntry[];
}

const OWN_FILE = /^\.(?:[a-z0-9][a-z0-9_-]*\.md|put)\.(\d+)\.[0-9a-f]{8}\.(?:tmp|bak|journal|journal\.tmp)$/;
const JOURNAL = /^\.put\.(\d+)\.[0-9a-f]{8}\.journal$/;

function uniqueName(prefix: string, kind: string): string {
  return `.${prefix}.${process.pid}.${randomBytes(4).toString("hex")}.${kind}`;
}

/** Creates `path` (0600, must not exist), writes `body`, fsyncs; removes it again on failure. */
function writeDurable(path: string, body: string): void {
  const fd = openSync(path, "wx", 0o600);
  try {
    writeSync(fd, body);
    fsyncSync(fd);
  } catch (e) {
    // A disk filling up mid-write must not leave this temp file behind.
    closeSync(fd);
    removeQuietly(path);
    throw e;
  }
  closeSync(fd);
}

function writeJournal(dir: string, name: string, journal: Journal): void {
  const temp = join(dir, `${name}.tmp`);
  writeDurable(temp, JSON.stringify(journal));
  renameSync(temp, join(dir, name));
  fsyncDir(dir);
}

/**
 * Writes several sections into one scope folder as one unit: after any
 * failure or crash (and `recoverIdentity` at the next start) either every
 * section of the call holds its new body or every one its old.
 */
export function writeSections(root: string, dir: string, sections: readonly (readonly [string, string])[]): void {
  if (sections.length === 0) return;
  ensureDirInside(root, dir);

  const entries: JournalEntry[] = [];
  const cleanup = () => {
    for (const e of entries) {
      removeQuietly(join(dir, e.temp));
      if (e.backup) removeQuietly(join(dir, e.backup));
    }
  };
  try {
    for (const [name, body] of sections) {
      const target = `${name}.md`;
      const existing = lstatOrNull(join(dir, target));
      if (existing?.isDirectory()) throw conflict(`${join(dir, target)} is a directory, not a section file; remove or rename it`);
      const temp = uniqueName(target, "tmp");
      writeDurable(join(dir, temp), body);
      const entry: JournalEntry = { temp, target, backup: null };
      entries.push(entry);
      if (existing) {
        // link(2) does not follow symlinks, so the backup restores exactly what was there.
        const backup = uniqueName(target, "bak");
        linkSync(join(dir, target), join(dir, backup));
        entry.backup = backup;
      }
    }
    fsyncDir(dir);
  } catch (e) {
    cleanup();
    throw e;
  }

  const journalName = uniqueName("put", "journal");
  try {
    writeJournal(dir, journalName, { state: "forward", entries });
  } catch (e) {
    removeQuietly(join(dir, journalName));
    removeQuietly(join(dir, `${journalName}.tmp`));
    cleanup();
    throw e;
  }

  try {
    for (const e of entries) renameSync(join(dir, e.temp), join(dir, e.target));
    fsyncDir(dir);
  } catch (e) {
    // Turn the journal around first: a crash from here on must also end with the old files.
    try {
      writeJournal(dir, journalName, { state: "back", entries });
    } catch {
      // Still "forward" on disk: a replay after the rollback below finds no temps left, so it keeps the old files too.
    }
    rollBack(dir, entries);
    removeQuietly(join(dir, journalName));
    fsyncDir(dir);
    throw e;
  }
  for (const e of entries) if (e.backup) removeQuietly(join(dir, e.backup));
  removeQuietly(join(dir, journalName));
  fsyncDir(dir);
}

function rollBack(dir: string, entries: JournalEntry[]): void {
  for (const e of entries) {
    if (e.backup) {
      if (existsSync(join(dir, e.backup))) renameSync(join(dir, e.backup), join(dir, e.target));
      // A target never replaced is the backup's own inode, and rename(2) between two links of one
      // file does nothing: the backup name would stay behind.
      removeQuietly(join(dir, e.backup));
    } else if (!existsSync(join(dir, e.temp))) {
      // Its temp was renamed: the section is new, so undoing it is removing it.
      removeQuietly(join(dir, e.target));
    }
    removeQuietly(join(dir, e.temp));
  }
}

function rollForward(dir: string, entries: JournalEntry[]): void {
  for (const e of entries) {
    if (existsSync(join(dir, e.temp))) renameSync(join(dir, e.temp), join(dir, e.target));
  }
  fsyncDir(dir);
  for (const e of entries) if (e.backup) removeQuietly(join(dir, e.backup));
}

function readJournal(path: string): Journal | null {
  try {
    const j = JSON.parse(readFileSync(path, "utf8")) as Journal;
    const safe = (n: unknown) => typeof n === "string" && !n.includes("/") && !n.includes("\\") && n !== "." && n !== "..";
    if ((j.state !== "forward" && j.state !== "back") || !Array.isArray(j.entries)) return null;
    if (!j.entries.every((e) => safe(e.temp) && safe(e.target) && (e.backup === null || safe(e.backup)))) return null;
    return j;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  if (pid === process.pid) return false; // we are starting: nothing of ours is in flight
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface RecoveryReport {
  rolledForward: number;
  rolledBack: number;
  removed: number;
}

/** Finishes or undoes the interrupted PUTs of one folder, then removes stray temp files. */
export function recoverFolder(dir: string, warn: Warn): RecoveryReport {
  const report: RecoveryReport = { rolledForward: 0, rolledBack: 0, removed: 0 };
  if (!existsSync(dir)) return report;
  const files = readdirSync(dir);
  for (const f of files) {
    const m = JOURNAL.exec(f);
    if (!m || alive(Number(m[1]))) continue;
    const journal = readJournal(join(dir, f));
    if (journal === null) {
      // Only ever renamed into place whole, so unreadable means hand-damaged: leave the files as they are.
      warn(`${join(dir, f)}: unreadable write journal; removed without replaying it`);
    } else if (journal.state === "forward") {
      rollForward(dir, journal.entries);
      report.rolledForward++;
    } else {
      rollBack(dir, journal.entries);
      report.rolledBack++;
    }
    removeQuietly(join(dir, f));
    fsyncDir(dir);
  }
  for (const f of readdirSync(dir)) {
    const m = OWN_FILE.exec(f);
    if (!m || alive(Number(m[1]))) continue;
    removeQuietly(join(dir, f));
    report.removed++;
  }
  if (report.removed > 0) fsyncDir(dir);
  return report;
}

/** At start: recovers the global folder and every agent folder. */
export function recoverIdentity(root: string, warn: Warn): RecoveryReport {
  const total: RecoveryReport = { rolledForward: 0, rolledBack: 0, removed: 0 };
  if (!existsSync(root)) return total;
  for (const dir of [root, ...agentFolders(root, warn).map((id) => join(root, "agents", id))]) {
    const r = recoverFolder(dir, warn);
    total.rolledForward += r.rolledForward;
    total.rolledBack += r.rolledBack;
    total.removed += r.removed;
  }
  return total;
}
