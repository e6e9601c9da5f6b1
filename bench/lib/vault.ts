/**
 * The generated Markdown vault of bench/import.ts and bench/import-profile.ts:
 * a folder per project, nine in ten short notes with front matter, tags and a
 * wikilink, one in ten structured with headings, decision bullets and relations.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NoteGenerator } from "./corpus";

/** Writes the vault; returns the folder and how many notes of each shape. */
export function generateVault(dir: string, notes: number): { short: number; structured: number; seconds: number } {
  const started = performance.now();
  const gen = new NoteGenerator(40);
  const titles: string[] = [];
  const made = new Set<string>();
  let short = 0;
  let structured = 0;
  for (let i = 0; i < notes; i++) {
    const n = gen.note();
    const folder = join(dir, n.project);
    if (!made.has(folder)) mkdirSync(folder, { recursive: true }), made.add(folder);
    const title = `${n.content
      .split(/\s+/)
      .slice(0, 5)
      .join(" ")
      .replace(/[^\p{L}\p{N} -]/gu, "")} ${i}`;
    const link = titles.length ? ` See [[${titles[Math.floor(gen.random() * titles.length)]}]].` : "";
    const created = new Date(gen.createdAt(Date.UTC(2026, 0, 1), 730)).toISOString().slice(0, 10);
    let body: string;
    if (i % 10 === 9) {
      structured++;
      const more = [gen.note().content, gen.note().content];
      body = `# ${title}\n\n## Context\n\n${n.content}${link}\n\n## Decisions\n\n- [decision] ${more[0]}\n- ${more[1]}\n\n## Relations\n\n- relates_to [[${titles[Math.floor(gen.random() * Math.max(1, titles.length))] ?? title}]]\n`;
    } else {
      short++;
      body = `${n.content}${link}\n`;
    }
    writeFileSync(
      join(folder, `${title}.md`),
      `---\ntitle: ${JSON.stringify(title)}\ntype: ${n.memoryType}\ntags: [${n.project}]\ncreated: ${created}\n---\n${body}`,
    );
    titles.push(title);
  }
  return { short, structured, seconds: (performance.now() - started) / 1000 };
}
