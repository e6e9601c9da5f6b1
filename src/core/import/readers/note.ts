import { basename, extname } from "node:path";
import { MEMORY_TYPES, type MemoryType } from "../../memories";
import { DISTILL_MODEL_LINK_WEIGHT } from "../../distill/tuning";
import { parseFrontMatter, splitMarkdown } from "../markdown";
import type { ImportItem } from "../types";

/**
 * A category or type word from another tool (a Basic Memory observation's
 * [category], claude-mem's observation type, Claude Code's memory type) as one
 * of memsvc's four types; `fallback` for words that say nothing about it.
 */
export function typeFromWord(word: unknown, fallback: MemoryType): MemoryType {
  if (typeof word !== "string") return fallback;
  const w = word.trim().toLowerCase();
  if ((MEMORY_TYPES as readonly string[]).includes(w)) return w as MemoryType;
  if (/^(decision|decided|choice|policy|convention|rule|project)s?$/.test(w)) return "decisions";
  if (/^(lesson|learning|learned|insight|gotcha|pitfall|mistake|feedback|tip|bugfix)s?$/.test(w)) return "learnings";
  if (/^(experience|episode|event|session|attempt|feature|refactor|change|fix|summary|log)s?$/.test(w)) return "experience";
  if (/^(fact|knowledge|reference|user|discovery|note|method|technique|preference|concept)s?$/.test(w)) return "knowledge";
  return fallback;
}

/** An ISO date or date-time, a Date, or epoch seconds/ms, as epoch ms; null when it is none. */
export function parseDate(v: unknown): number | null {
  if (v instanceof Date) return Number.isFinite(v.getTime()) ? v.getTime() : null;
  if (typeof v === "number" && Number.isFinite(v) && v > 0) return v < 1e11 ? v * 1000 : v;
  if (typeof v !== "string" || !/^\d{4}-\d{2}-\d{2}/.test(v.trim())) return null;
  let t = v.trim().replace(" ", "T");
  if (/^\d{4}-\d{2}-\d{2}$/.test(t)) t += "T00:00:00Z";
  // Python writes microseconds (mem0): JavaScript dates take milliseconds.
  t = t.replace(/(\.\d{3})\d+/, "$1");
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? ms : null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Where memsvc's Markdown export puts a memory's links (export-markdown.ts). */
export const LINKS_MARKER = "<!-- memsvc:links -->";

const stringList = (v: unknown): string[] =>
  Array.isArray(v)
    ? v.filter((x): x is string => typeof x === "string")
    : typeof v === "string"
      ? v
          .split(/[,\s]+/)
          .map((x) => x.replace(/^#/, ""))
          .filter(Boolean)
      : [];

/** The key a wikilink or relation target resolves by: its note name, case-insensitive, without a folder or .md. */
export const noteKey = (name: string) => `note:${basename(name.trim(), ".md").toLowerCase()}`;

export interface NoteOptions {
  sourceAgent: string;
  /** The project inferred from where the file lies; front matter `project` wins. */
  project: string | null;
  /** A note's title (its file name); null for instruction files (CLAUDE.md...), whose bullets need none. */
  title: string | null;
  wholeIfSmall: boolean;
  defaultType: MemoryType;
  /** For notes without a date of their own (the file's modification time). */
  createdAt: number;
  /** How the file is named in provenance (its path). */
  file: string;
}

/**
 * One Markdown file as import items: front matter (title, type, project,
 * dates, tags, aliases), pieces from splitMarkdown, wikilinks and relations
 * as links to other notes by name. A file memsvc exported (front matter with
 * its id and type) is one memory again, with its dates, strength and links.
 */
export function noteItems(text: string, o: NoteOptions): ImportItem[] {
  const fm = parseFrontMatter(text);
  const d = fm.data;
  const stem = basename(o.file, extname(o.file));
  const title = typeof d.title === "string" ? d.title : typeof d.name === "string" ? d.name : o.title;
  const keys = [noteKey(stem), ...(title ? [noteKey(title)] : []), ...stringList(d.aliases).map(noteKey)];
  if (typeof d.permalink === "string") keys.push(noteKey(d.permalink));
  const project = "project" in d ? (typeof d.project === "string" && d.project.trim() ? d.project.trim() : null) : o.project;
  const createdAt = parseDate(d.created ?? d.created_at ?? d.date) ?? o.createdAt;
  const tags = stringList(d.tags);
  const noteType = typeFromWord(d.type ?? d.category, o.defaultType);

  if (typeof d.id === "string" && UUID.test(d.id) && typeof d.type === "string" && (MEMORY_TYPES as readonly string[]).includes(d.type)) {
    // memsvc's own export: the body is the memory, `source` its tool; the links follow the marker.
    const source = typeof d.source === "string" && d.source.trim() ? d.source.trim().slice(0, 200) : o.sourceAgent;
    const cut = fm.body.lastIndexOf(LINKS_MARKER);
    const content = (cut >= 0 ? fm.body.slice(0, cut) : fm.body).trim();
    const { relations } = splitMarkdown(cut >= 0 ? fm.body.slice(cut) : "", { title: null, wholeIfSmall: false, bodyLine: 1 });
    const strength = typeof d.strength === "number" && d.strength >= 0 ? d.strength : undefined;
    return [
      {
        content,
        memoryType: d.type as MemoryType,
        project,
        createdAt,
        updatedAt: parseDate(d.updated) ?? undefined,
        strength,
        sourceAgent: source,
        provenance: typeof d.session === "string" && d.session ? d.session : `${o.file}:${fm.bodyLine}`,
        tags,
        keys: [...keys, `id:${d.id}`],
        links: relations.map((r) => ({ to: noteKey(r.target), relationship: r.relationship, weight: r.weight ?? DISTILL_MODEL_LINK_WEIGHT })),
      },
    ];
  }

  const split = splitMarkdown(fm.body, { title, wholeIfSmall: o.wholeIfSmall, bodyLine: fm.bodyLine });
  const items: ImportItem[] = split.pieces.map((p) => ({
    content: p.text,
    memoryType: p.category ? typeFromWord(p.category, noteType) : noteType,
    project,
    createdAt,
    sourceAgent: o.sourceAgent,
    provenance: `${o.file}:${p.line}`,
    tags: [...tags, ...p.tags],
    keys: [],
    links: p.links.map((t) => ({ to: noteKey(t), relationship: "mentions", weight: DISTILL_MODEL_LINK_WEIGHT })),
  }));
  if (items.length === 0) return items;
  // Links to a note land on its first memory; a note's relations start there too.
  items[0].keys = keys;
  for (const r of split.relations) items[0].links.push({ to: noteKey(r.target), relationship: r.relationship, weight: r.weight ?? DISTILL_MODEL_LINK_WEIGHT });
  return items;
}
