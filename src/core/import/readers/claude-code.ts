import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, extname, join, resolve } from "node:path";
import type { ImportItem, ReaderOptions, ReadResult, SourceProblem } from "../types";
import { checkPath, eachFile, mtimeOf, readText, walk } from "./files";
import { noteItems } from "./note";

/**
 * Claude Code's memory (checked against its memory docs and the layout of
 * Claude Code 2.x): the user's ~/.claude/CLAUDE.md and ~/.claude/rules/*.md,
 * each project's CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md and
 * .claude/rules/*.md (projects found in ~/.claude.json), and the automatic
 * memory Claude keeps per project in ~/.claude/projects/<path slug>/memory/
 * (MEMORY.md, an index, and topic files with name/description/type front
 * matter). `path` is a home folder, its .claude folder, or one project folder.
 */
export async function* readClaudeCode(path: string, opts: ReaderOptions): AsyncGenerator<ReadResult> {
  const root = resolve(path);
  const bad = checkPath(root, "folder");
  if (bad) return yield { items: [], problems: [{ source: root, message: bad }], sources: 0 };
  // A project has a .claude folder too (settings, CLAUDE.md): the user's has projects/, or is in the home folder.
  const claudeDir =
    basename(root) === ".claude"
      ? root
      : existsSync(join(root, ".claude", "projects")) || (root === homedir() && existsSync(join(root, ".claude")))
        ? join(root, ".claude")
        : null;
  const jobs: { file: string; project: string | null; kind: "instructions" | "auto" | "index" }[] = [];
  const problems: SourceProblem[] = [];
  if (!claudeDir) {
    // One project folder.
    jobs.push(...projectFiles(root).map((file) => ({ file, project: basename(root), kind: "instructions" as const })));
    if (jobs.length === 0)
      return yield {
        items: [],
        problems: [{ source: root, message: "no Claude Code memory here: neither a .claude folder with CLAUDE.md or projects/, nor a project CLAUDE.md" }],
        sources: 0,
      };
  } else {
    const home = dirname(claudeDir);
    if (existsSync(join(claudeDir, "CLAUDE.md"))) jobs.push({ file: join(claudeDir, "CLAUDE.md"), project: null, kind: "instructions" });
    for (const file of walk(join(claudeDir, "rules"), (n) => n.endsWith(".md"))) jobs.push({ file, project: null, kind: "instructions" });
    const known = knownProjects(home, problems);
    for (const p of known) for (const file of projectFiles(p)) jobs.push({ file, project: basename(p), kind: "instructions" });
    const projectsDir = join(claudeDir, "projects");
    for (const slug of existsSync(projectsDir) ? readdirSync(projectsDir).sort() : []) {
      const memory = join(projectsDir, slug, "memory");
      if (!existsSync(memory) || !statSync(memory).isDirectory()) continue;
      const project = projectOfSlug(slug, known);
      for (const file of walk(memory, (n) => n.endsWith(".md"), { maxDepth: 0 }))
        jobs.push({ file, project, kind: basename(file) === "MEMORY.md" ? "index" : "auto" });
    }
    if (jobs.length === 0)
      return yield {
        items: [],
        problems: [{ source: claudeDir, message: "no CLAUDE.md, rules or automatic memory found in this .claude folder" }],
        sources: 0,
      };
  }
  const byFile = new Map(jobs.map((j) => [j.file, j]));
  if (problems.length) yield { items: [], problems, sources: 0 };
  yield* eachFile(
    jobs.map((j) => j.file),
    async (file): Promise<ImportItem[]> => {
      const job = byFile.get(file)!;
      let text = await readText(file);
      if (job.kind === "index") text = withoutIndexLines(text, dirname(file));
      return noteItems(text, {
        sourceAgent: "claude-code",
        project: job.project,
        title: job.kind === "auto" ? basename(file, extname(file)).replace(/[_-]+/g, " ") : null,
        wholeIfSmall: job.kind === "auto",
        defaultType: "knowledge",
        createdAt: Math.min(mtimeOf(file), opts.now),
        file,
      });
    },
  );
}

/** A project's own memory files, those that exist. */
function projectFiles(dir: string): string[] {
  const files = ["CLAUDE.md", join(".claude", "CLAUDE.md"), "CLAUDE.local.md"].map((f) => join(dir, f)).filter((f) => existsSync(f));
  return [...files, ...walk(join(dir, ".claude", "rules"), (n) => n.endsWith(".md"))];
}

/** Project folders Claude Code has opened: the keys of ~/.claude.json's "projects" that still exist. */
function knownProjects(home: string, problems: SourceProblem[]): string[] {
  const file = join(home, ".claude.json");
  if (!existsSync(file)) return [];
  try {
    const projects = (JSON.parse(readFileSync(file, "utf8")) as { projects?: Record<string, unknown> }).projects ?? {};
    return Object.keys(projects)
      .filter((p) => p.startsWith("/") && existsSync(p) && statSync(p).isDirectory())
      .sort();
  } catch (e) {
    problems.push({ source: file, message: `not readable as JSON, so project CLAUDE.md files were not looked up (${(e as Error).message.split("\n")[0]})` });
    return [];
  }
}

/** Claude Code names a project's folder by its path with every other character than letters and digits as "-". */
export const slugOf = (path: string) => path.replace(/[^a-zA-Z0-9]/g, "-");

/** The project a slug stands for: a known project's folder name, else the folder found on disk, else its last part. */
export function projectOfSlug(slug: string, known: string[]): string {
  const hit = known.find((p) => slugOf(p) === slug);
  if (hit) return basename(hit);
  const parts = slug.split("-").filter(Boolean);
  const found = resolveParts("/", parts);
  return found ? basename(found) : (parts.at(-1) ?? slug);
}

/** Walks `parts` down from `dir`, joining neighbours with "-", "." or "_" where a folder of that name exists. */
function resolveParts(dir: string, parts: string[], depth = 0): string | null {
  if (parts.length === 0) return dir;
  if (depth > 24) return null;
  for (let n = parts.length; n >= 1; n--) {
    for (const sep of n === 1 ? [""] : ["-", ".", "_"]) {
      const name = parts.slice(0, n).join(sep);
      const next = join(dir, name);
      if (existsSync(next) && statSync(next).isDirectory()) {
        const rest = resolveParts(next, parts.slice(n), depth + 1);
        if (rest) return rest;
      }
    }
  }
  return null;
}

/** MEMORY.md lists its topic files as "- [Title](file.md) — hook": those lines point at files imported on their own. */
function withoutIndexLines(text: string, dir: string): string {
  return text
    .split("\n")
    .filter((line) => {
      const m = /^\s*[-*+]\s+\[[^\]]*\]\(([^)\s]+\.md)\)/.exec(line);
      return !(m && existsSync(join(dir, decodeURIComponent(m[1]))));
    })
    .join("\n");
}
