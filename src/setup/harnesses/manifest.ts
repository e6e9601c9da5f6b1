import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../../private-files";
import type { HarnessId } from "./types";

/**
 * <home>/state/wiring.json: for every harness file memsvc wrote, whether it
 * existed before, the backup of its pre-memsvc bytes and the sha256 of what
 * memsvc wrote. Uninstall restores the backup exactly when the file still
 * hashes to what memsvc wrote, and edits surgically when it does not.
 */
export interface FileRecord {
  harness: HarnessId;
  existed: boolean;
  backup: string | null;
  sha256: string;
  /** Folders install created for the file, outermost first. */
  createdDirs: string[];
  at: string;
}

export interface Manifest {
  version: 1;
  files: Record<string, FileRecord>;
}

export const manifestPath = (home: string) => join(home, "state", "wiring.json");

export function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

export function readManifest(home: string): Manifest {
  const file = manifestPath(home);
  if (!existsSync(file)) return { version: 1, files: {} };
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8"));
    if (parsed && typeof parsed === "object" && parsed.files && typeof parsed.files === "object") return { version: 1, files: parsed.files };
  } catch {
    // A damaged manifest only costs exactness: uninstall falls back to surgical removal.
  }
  return { version: 1, files: {} };
}

export function writeManifest(home: string, manifest: Manifest): void {
  const file = manifestPath(home);
  ensurePrivateDir(dirname(file));
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(manifest, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
  makePrivate(temp);
  renameSync(temp, file);
}
