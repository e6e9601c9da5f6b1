import {
  type Stats,
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { conflict } from "../../errors";
import { ensurePrivateDir, PRIVATE_DIR_MODE } from "../../private-files";

/**
 * The identity folder on disk: one Markdown file per section, global sections
 * in `<root>/<name>.md`, per-agent ones in `<root>/agents/<id>/<name>.md`.
 * Every path is built from an allow-listed name and checked (after resolving
 * symlinks) to stay inside the root, so no request can read or write elsewhere.
 */

export const NAME_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;
export const NAME_MAX = 64;

export function isValidName(value: unknown): value is string {
  return typeof value === "string" && value.length <= NAME_MAX && NAME_PATTERN.test(value);
}

export interface SectionFile {
  body: string;
  mtimeMs: number;
}

export type Warn = (message: string) => void;

function inside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The root with symlinks resolved, or null while it does not exist yet. */
function realRoot(root: string): string | null {
  return existsSync(root) ? realpathSync(root) : null;
}

/** `path` resolves (through any symlink) to a place inside the root. */
function resolvesInside(root: string, path: string): boolean {
  const base = realRoot(root);
  if (base === null) return false;
  try {
    return inside(base, realpathSync(path));
  } catch {
    return false; // dangling link
  }
}

export function agentDir(root: string, agent: string): string {
  return join(root, "agents", agent);
}

/** A usable per-agent folder exists: a directory that resolves inside the root. */
export function agentDirPresent(root: string, agent: string): boolean {
  const dir = agentDir(root, agent);
  if (!existsSync(dir)) return false;
  return resolvesInside(root, dir) && statSync(dir).isDirectory();
}

/** Agent ids that have a folder under agents/ (invalid names and escaping links are ignored). */
export function agentFolders(root: string, warn: Warn): string[] {
  const dir = join(root, "agents");
  if (!existsSync(dir) || !resolvesInside(root, dir)) return [];
  const ids: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (!isValidName(entry)) continue;
    if (!resolvesInside(root, join(dir, entry))) {
      warn(`identity/agents/${entry} points outside the identity folder; ignored`);
      continue;
    }
    if (statSync(join(dir, entry)).isDirectory()) ids.push(entry);
  }
  return ids.sort();
}

/**
 * The sections of one scope folder, sorted by name. Files whose names are not
 * valid section names, non-files and links leading outside the root are
 * skipped (with a warning: a hand-made `My Notes.md` would otherwise vanish silently).
 */
export function readScope(root: string, dir: string, warn: Warn): Map<string, SectionFile> {
  const out = new Map<string, SectionFile>();
  if (!existsSync(dir)) return out;
  if (!resolvesInside(root, dir)) {
    warn(`${dir} points outside the identity folder; its sections are ignored`);
    return out;
  }
  const names = readdirSync(dir)
    .filter((f) => f.endsWith(".md"))
    .sort();
  for (const file of names) {
    const name = file.slice(0, -3);
    const path = join(dir, file);
    if (!isValidName(name)) {
      warn(`${path}: "${name}" is not a valid section name (${NAME_PATTERN.source}, at most ${NAME_MAX} characters); ignored`);
      continue;
    }
    if (lstatSync(path).isSymbolicLink() && !resolvesInside(root, path)) {
      warn(`${path} links outside the identity folder; ignored`);
      continue;
    }
    let st: Stats;
    try {
      st = statSync(path);
    } catch {
      continue; // vanished or dangling between readdir and stat
    }
    if (!st.isFile()) continue;
    out.set(name, { body: readFileSync(path, "utf8"), mtimeMs: st.mtimeMs });
  }
  return out;
}

export function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

export function fsyncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    /* some filesystems refuse fsync on a directory; the renames are still atomic */
  }
}

/**
 * Creates `dir` below the root one component at a time, checking each one
 * that already exists: a symlinked agents/ or agents/<id> leading elsewhere
 * must not get even an empty folder created at its destination.
 */
export function ensureDirInside(root: string, dir: string): void {
  ensurePrivateDir(root);
  let path = root;
  for (const part of relative(root, dir).split(sep).filter(Boolean)) {
    path = join(path, part);
    if (lstatOrNull(path)) {
      if (!resolvesInside(root, path)) throw conflict(`${path} resolves outside the identity folder (a symlink?); refusing to write there`);
      if (!statSync(path).isDirectory()) throw conflict(`${path} is not a directory; remove or rename it`);
    } else {
      mkdirSync(path, { mode: PRIVATE_DIR_MODE });
      chmodSync(path, PRIVATE_DIR_MODE);
    }
  }
}

export function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}
