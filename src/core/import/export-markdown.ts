import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { invalid } from "../../errors";
import { ensurePrivateDir, PRIVATE_FILE_MODE } from "../../private-files";
import { isoTime } from "../dates";
import type { FullMemory, LinkRecord, AnchorRecord } from "../memories/store-bulk";
import type { Storage } from "../storage";
import { LINKS_MARKER } from "./readers/note";

export interface MarkdownExportSummary {
  folder: string;
  memories: number;
  links: number;
  projects: number;
}

/** The folder of memories without a project. */
export const NO_PROJECT_FOLDER = "_no-project";

/** A project name as a folder name on every OS (the exact name is in each file's front matter). */
const folderOf = (project: string | null) =>
  project === null
    ? NO_PROJECT_FOLDER
    : project
        .replace(/[\\/:*?"<>|\u0000-\u001f]+/g, "-")
        .replace(/^[.\s]+|[.\s]+$/g, "")
        .slice(0, 80) || "_project";

/** A memory's file name (and wikilink target): its short id, then the first words of its text. */
export function noteName(m: { id: string; content: string }): string {
  const words = m.content
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()
    .split(" ")
    .slice(0, 6)
    .join("-")
    .slice(0, 60);
  return words ? `${m.id.slice(0, 8)}-${words}` : m.id.slice(0, 8);
}

/**
 * `memsvc export --format markdown`: one file per memory under a folder per
 * project, YAML front matter (id, type, project, dates, strength, source,
 * session, tags, anchors, aliases) and the memory's links as Basic-Memory-style
 * relation bullets with wikilinks after a marker, so Obsidian opens the folder
 * as a vault with its graph and `memsvc import --from markdown` restores it.
 * Read from one consistent snapshot; the folder must be new or empty.
 */
export async function exportMarkdown(storage: Storage, folder: string): Promise<MarkdownExportSummary> {
  if (existsSync(folder) && (!statSync(folder).isDirectory() || readdirSync(folder).length > 0)) {
    throw invalid(`${folder} exists and is not an empty folder; choose a new one`);
  }
  const memories: FullMemory[] = [];
  const tags = new Map<string, string[]>();
  const links = new Map<string, LinkRecord[]>();
  const anchors = new Map<string, AnchorRecord[]>();
  let linkCount = 0;
  await storage.memories.exportRows({ vectors: false }, async (row) => {
    if (row.kind === "memory") {
      memories.push(row.memory);
      tags.set(
        row.memory.id,
        row.memory.tags.map((t) => t.tag),
      );
    } else if (row.kind === "link") {
      links.set(row.link.from_id, [...(links.get(row.link.from_id) ?? []), row.link]);
      linkCount++;
    } else if (row.kind === "anchor") {
      anchors.set(row.anchor.memory_id, [...(anchors.get(row.anchor.memory_id) ?? []), row.anchor]);
    }
  });
  const names = new Map(memories.map((m) => [m.id, noteName(m)]));
  ensurePrivateDir(folder);
  const projects = new Set<string>();
  for (const m of memories) {
    const dir = join(folder, folderOf(m.project));
    if (!projects.has(dir)) {
      ensurePrivateDir(dir);
      projects.add(dir);
    }
    const front: Record<string, unknown> = {
      id: m.id,
      type: m.memory_type,
      project: m.project,
      created: isoTime(m.created_at),
      updated: isoTime(m.updated_at),
      strength: Math.round(m.strength * 1000) / 1000,
      source: m.source_agent,
    };
    if (m.source_session) front.session = m.source_session;
    front.tags = tags.get(m.id) ?? [];
    const a = anchors.get(m.id);
    if (a?.length) front.anchors = a.map((x) => ({ repo: x.repo, ...(x.branch ? { branch: x.branch } : {}), commit: x.commit_id, paths: safeJson(x.paths) }));
    front.aliases = [m.id.slice(0, 8)];
    const out = (links.get(m.id) ?? []).filter((l) => names.has(l.to_id));
    const body = out.length
      ? `\n\n${LINKS_MARKER}\n## Links\n\n${out.map((l) => `- ${l.relationship} [[${names.get(l.to_id)}]] (weight ${Math.round(l.weight * 1000) / 1000})`).join("\n")}\n`
      : "\n";
    writeFileSync(join(dir, `${names.get(m.id)}.md`), `---\n${Bun.YAML.stringify(front, null, 2).trimEnd()}\n---\n${m.content.trim()}${body}`, {
      mode: PRIVATE_FILE_MODE,
    });
  }
  return { folder, memories: memories.length, links: linkCount, projects: projects.size };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
