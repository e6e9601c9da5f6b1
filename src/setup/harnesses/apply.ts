import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmdirSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, join, parse as parsePath, resolve } from "node:path";
import { ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../../private-files";
import { readManifest, sha256, writeManifest } from "./manifest";
import { WiringError, type FileChange } from "./types";

/** Where a file's backup goes: <home>/backups/wiring-<stamp>/<its absolute path>, so backups never land in a harness's watched config folder. */
export function backupPathFor(home: string, stamp: string, file: string): string {
  const abs = resolve(file);
  const root = parsePath(abs).root;
  const rel = abs.slice(root.length);
  const drive = root.replace(/[:\\/]/g, "");
  return join(home, "backups", `wiring-${stamp}`, ...(drive ? [drive] : []), rel);
}

function readBytes(file: string): Buffer | null {
  return existsSync(file) ? readFileSync(file) : null;
}

/** The folders between `dir` and its first existing ancestor, outermost first: what a recursive mkdir would create. */
function missingDirs(dir: string): string[] {
  const out: string[] = [];
  let d = resolve(dir);
  while (!existsSync(d)) {
    out.unshift(d);
    const up = dirname(d);
    if (up === d) break;
    d = up;
  }
  return out;
}

/** Through a temp name and rename: a crash leaves the old or the new file. The user's file keeps its mode; a new one is private. */
function writeAtomically(file: string, data: string | Buffer, existingMode: number | null): void {
  const mode = existingMode ?? PRIVATE_FILE_MODE;
  const temp = `${file}.memsvc-${process.pid}.tmp`;
  writeFileSync(temp, data, { mode });
  chmodSync(temp, mode);
  renameSync(temp, file);
}

/**
 * Writes planned changes. Every file that exists is first copied to
 * <home>/backups/wiring-<stamp>/... (0600); <home>/state/wiring.json records,
 * per file, whether it existed, the backup of its pre-memsvc bytes and the
 * sha256 of what was written. A file that changed since it was planned is
 * not touched (the plan is stale): nothing after it is written either.
 */
export function applyChanges(changes: FileChange[], opts: { home: string }): { file: string; backup: string | null }[] {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const manifest = readManifest(opts.home);
  const results: { file: string; backup: string | null }[] = [];
  try {
    for (const change of changes) {
      const file = resolve(change.file);
      const current = readBytes(file);
      const currentText = current === null ? null : current.toString("utf8");
      if (currentText !== change.before) throw new WiringError(`${file} changed after the plan was made; nothing more was written, run the command again`);
      let backup: string | null = null;
      const mode = current === null ? null : statSync(file).mode & 0o777;
      if (current !== null) {
        backup = backupPathFor(opts.home, stamp, file);
        ensurePrivateDir(dirname(backup));
        copyFileSync(file, backup);
        makePrivate(backup);
      }
      const record = manifest.files[file];
      if (change.after === null) {
        if (current !== null) unlinkSync(file);
        // Only folders memsvc created, and only when nothing else lives in them now.
        for (const dir of [...(change.removeDirs ?? [])].reverse()) {
          try {
            if (existsSync(dir) && readdirSync(dir).length === 0) rmdirSync(dir);
          } catch {
            /* a folder in use stays */
          }
        }
      } else {
        const created = missingDirs(dirname(file));
        if (created.length > 0) ensurePrivateDir(dirname(file));
        const data = change.restoreFrom ? readFileSync(change.restoreFrom) : Buffer.from(change.after, "utf8");
        writeAtomically(file, data, mode);
        if (change.action === "install") {
          const written = sha256(data);
          // A file still as memsvc left it keeps its record: its backup is the pre-memsvc version.
          const untouched = record && current !== null && sha256(current) === record.sha256;
          manifest.files[file] = untouched
            ? { ...record, sha256: written, at: new Date().toISOString() }
            : { harness: change.harness, existed: current !== null, backup, sha256: written, createdDirs: created, at: new Date().toISOString() };
        }
      }
      if (change.action === "uninstall") delete manifest.files[file];
      results.push({ file, backup });
    }
  } finally {
    if (results.length > 0) writeManifest(opts.home, manifest);
  }
  return results;
}
