import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";

/** A relative link in a Markdown file that leads nowhere. */
export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  reason: string;
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | null = null;
  text.split("\n").forEach((ln, i) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(ln);
    if (m) {
      if (fence === null) fence = m[1][0];
      else if (m[1][0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line: i + 1, text: ln });
  });
  return out;
}

/** GitHub's heading anchor: rendered text lower-cased, punctuation but `-` and `_` dropped, spaces to `-`. */
export function slug(heading: string): string {
  const text = heading
    .replace(/`/g, "")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\*\*?|__/g, "");
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a file's headings make, numbered as GitHub numbers repeats (`x`, `x-1`, ...). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text: ln } of proseLines(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(ln);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Link targets of `[text](target)` outside code (fenced blocks and inline spans). */
export function links(text: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  for (const { line, text: ln } of proseLines(text)) {
    const prose = ln.replace(/(`+)[\s\S]*?\1/g, "");
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line, target: m[1] });
  }
  return out;
}

/**
 * Checks every relative link of the given Markdown files: the file it names exists (inside
 * root), and an `#anchor` names a heading of that file. Web links are not fetched.
 */
export function brokenLinks(root: string, files: string[]): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchorsOf = (path: string) => {
    let a = anchorCache.get(path);
    if (!a) anchorCache.set(path, (a = anchors(readFileSync(path, "utf8"))));
    return a;
  };
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const name = relative(root, file);
    for (const { line, target } of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      const [pathPart, hash] = target.split("#", 2) as [string, string | undefined];
      const dest = pathPart ? resolve(dirname(file), decodeURIComponent(pathPart)) : file;
      const fail = (reason: string) => broken.push({ file: name, line, target, reason });
      if (relative(root, dest).startsWith("..")) {
        fail("leads outside the repository");
        continue;
      }
      if (!existsSync(dest)) {
        fail("no such file");
        continue;
      }
      if (hash === undefined) continue;
      if (statSync(dest).isDirectory() || !dest.endsWith(".md")) {
        fail("an anchor into something that is not Markdown");
        continue;
      }
      if (!anchorsOf(dest).has(decodeURIComponent(hash))) fail(`no heading with anchor #${hash} in ${relative(root, dest)}`);
    }
  }
  return broken;
}
