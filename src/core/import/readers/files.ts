import { type Dirent, type Stats, lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { IMPORT_READ_FILES } from "../tuning";
import type { ReadResult, SourceProblem } from "../types";

/** Folders no note or instruction file of the user's lives in. */
const SKIP_DIRS = new Set(["node_modules", ".git", ".hg", ".svn", ".trash", ".obsidian", "dist", "build", "vendor", "target", ".venv", "__pycache__"]);

/**
 * Files under `root` that `want` accepts, in a stable order (sorted), without
 * following symbolic links (a vault's link to the home would walk the disk).
 */
export function walk(root: string, want: (name: string) => boolean, opts: { maxDepth?: number; hidden?: (name: string) => boolean } = {}): string[] {
  const out: string[] = [];
  const visit = (dir: string, depth: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.isDirectory()) {
        if (SKIP_DIRS.has(e.name) || (e.name.startsWith(".") && !opts.hidden?.(e.name))) continue;
        if (depth < (opts.maxDepth ?? 32)) visit(join(dir, e.name), depth + 1);
      } else if (e.isFile() && want(e.name)) out.push(join(dir, e.name));
    }
  };
  visit(root, 0);
  return out;
}

/** A path that exists and is a folder (or a file, with kind "file"); else a one-line reason. */
export function checkPath(path: string, kind: "folder" | "file"): string | null {
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    return `${path} does not exist`;
  }
  if (kind === "folder" && !st.isDirectory()) return `${path} is not a folder`;
  if (kind === "file" && !st.isFile()) return `${path} is not a file`;
  return null;
}

export const mtimeOf = (file: string) => {
  try {
    return Math.floor(lstatSync(file).mtimeMs);
  } catch {
    return Date.now();
  }
};

/** The first folder under `root` on the way to `file`, or null for a file at the root. */
export function topFolder(root: string, file: string): string | null {
  const parts = relative(root, file).split(sep);
  return parts.length > 1 ? parts[0] : null;
}

/**
 * Reads each file with `read`, IMPORT_READ_FILES files a chunk (a stream: an
 * import holds a few chunks, not the whole folder); a file that throws is one
 * problem line and adds nothing. Each chunk says how many of the files are read.
 */
export async function* eachFile(files: string[], read: (file: string) => Promise<ReadResult["items"]> | ReadResult["items"]): AsyncGenerator<ReadResult> {
  for (let start = 0; start < files.length; start += IMPORT_READ_FILES) {
    const items: ReadResult["items"] = [];
    const problems: SourceProblem[] = [];
    let sources = 0;
    const end = Math.min(files.length, start + IMPORT_READ_FILES);
    for (const file of files.slice(start, end)) {
      try {
        items.push(...(await read(file)));
        sources++;
      } catch (e) {
        problems.push({ source: file, message: (e as Error).message });
      }
    }
    yield { items, problems, sources, of: { done: end, total: files.length } };
  }
}

/** Reads a file as UTF-8 text; refuses binary content (a NUL byte) with a clear reason. */
export async function readText(file: string): Promise<string> {
  // Synchronous: notes are small, and an async read per file cost more than the read (100k files).
  const text = readFileSync(file, "utf8");
  if (text.includes("\u0000")) throw new Error("not a text file (binary content)");
  return text;
}
