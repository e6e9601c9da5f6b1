import { existsSync } from "node:fs";
import { basename, dirname, relative, resolve, sep } from "node:path";
import type { ReaderOptions, ReadResult } from "../types";
import { checkPath, eachFile, mtimeOf, readText, walk } from "./files";
import { noteItems } from "./note";

/** The instruction files agents read from a repository, and the tool each belongs to. */
const FILES: Record<string, string> = {
  "AGENTS.md": "agents-md",
  "AGENT.md": "agents-md",
  "GEMINI.md": "gemini",
  "CLAUDE.md": "claude-code",
  "CLAUDE.local.md": "claude-code",
};

/**
 * AGENTS.md, GEMINI.md and CLAUDE.md files under a folder (one repository or
 * a folder of them). The project is the repository the file is in (the
 * nearest folder with .git up to `path`), else the folder under `path` it
 * lies in, else `path`'s own name.
 */
export async function* readAgentsMd(path: string, opts: ReaderOptions): AsyncGenerator<ReadResult> {
  const root = resolve(path);
  const bad = checkPath(root, "folder");
  if (bad) return yield { items: [], problems: [{ source: root, message: bad }], sources: 0 };
  const files = walk(root, (n) => n in FILES, { maxDepth: 8, hidden: (n) => n === ".claude" || n === ".gemini" });
  if (files.length === 0)
    return yield { items: [], problems: [{ source: root, message: "no AGENTS.md, GEMINI.md or CLAUDE.md found under this folder" }], sources: 0 };
  yield* eachFile(files, async (file) =>
    noteItems(await readText(file), {
      sourceAgent: FILES[basename(file)],
      project: projectOf(root, file),
      title: null,
      wholeIfSmall: false,
      defaultType: "knowledge",
      createdAt: Math.min(mtimeOf(file), opts.now),
      file,
    }),
  );
}

function projectOf(root: string, file: string): string {
  for (let dir = dirname(file); dir.length >= root.length; dir = dirname(dir)) {
    if (existsSync(`${dir}${sep}.git`)) return basename(dir);
    if (dir === root) break;
  }
  const first = relative(root, file).split(sep);
  return first.length > 1 && !first[0].startsWith(".") ? first[0] : basename(root);
}
