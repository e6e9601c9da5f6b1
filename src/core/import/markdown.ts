import { marked, type Token, type Tokens } from "marked";
import { IMPORT_ITEM_MAX_CHARS, IMPORT_SMALL_NOTE_CHARS } from "./tuning";

/** A document's YAML front matter (Bun's YAML parser) and the body after it. */
export interface FrontMatter {
  data: Record<string, unknown>;
  body: string;
  /** Line number (1-based) of the body's first line in the file. */
  bodyLine: number;
}

/** Splits off `---` front matter; throws with a one-line reason when the YAML is bad or not a mapping. */
export function parseFrontMatter(text: string): FrontMatter {
  const src = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const m = /^---\n([\s\S]*?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)/.exec(src);
  if (!m) return { data: {}, body: src, bodyLine: 1 };
  let data: unknown;
  try {
    data = Bun.YAML.parse(m[1]);
  } catch (e) {
    throw new Error(`front matter is not valid YAML (${(e as Error).message.split("\n")[0]})`);
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== "object" || Array.isArray(data)) throw new Error("front matter is not a YAML mapping of keys to values");
  return { data: data as Record<string, unknown>, body: src.slice(m[0].length), bodyLine: m[0].split("\n").length - (m[0].endsWith("\n") ? 0 : 1) };
}

/** A wikilink's target note: `[[Note#Heading|alias]]` names "Note". */
export const WIKILINK = /!?\[\[([^\]|#^\n]+)(?:[#^][^\]|\n]*)?(?:\|[^\]\n]*)?\]\]/g;

export function wikilinkTargets(text: string): string[] {
  return [...text.matchAll(WIKILINK)].map((m) => m[1].trim()).filter(Boolean);
}

/** Basic Memory's relation bullet: `relation_type [[Target]] (context)`. */
const RELATION = /^([\p{L}\p{N}_-]+)\s+\[\[([^\]|#\n]+)(?:[#|][^\]\n]*)?\]\]\s*(?:\(([^)]*)\))?\s*$/u;
/** Basic Memory's observation bullet: `[category] text #tag (context)`. */
const OBSERVATION = /^\[([^\]\n]{1,40})\]\s+(.+)$/s;
/** Inline #tags (Obsidian, Basic Memory); not headings, not URL fragments. */
const INLINE_TAG = /(?:^|\s)#([\p{L}][\p{L}\p{N}_/-]{0,39})/gu;

/** A line that starts a heading, list, quote, fence, table or rule: Markdown structure the lexer must see. */
const BLOCK_START = /^\s{0,3}(?:#|[-*+]\s|\d+[.)]\s|>|```|~~~|\||={3,}|-{3,}|_{3,})/m;

/** One memory-sized piece of a document. */
export interface Piece {
  text: string;
  /** 1-based line in the file. */
  line: number;
  /** A Basic Memory observation's category, when the piece is one. */
  category: string | null;
  tags: string[];
  /** Wikilink targets named in the piece. */
  links: string[];
}

export interface SplitDocument {
  pieces: Piece[];
  /** Relations the document names as a whole (`- implements [[Other]]`). */
  relations: { relationship: string; target: string; weight: number | null }[];
}

export interface SplitOptions {
  /** Prefixed to bullets with no heading above them (a note's title); null for instruction files. */
  title: string | null;
  /** A short document stays one piece (notes); instruction files split into bullets whatever their size. */
  wholeIfSmall: boolean;
  /** Line of the body's first line in the file. */
  bodyLine: number;
}

const lineAt = (text: string, offset: number) => {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) n++;
  return n;
};

const inlineTags = (text: string) => [...text.matchAll(INLINE_TAG)].map((m) => m[1]);

/** Text worth a memory: more than a link, a marker or a few characters. */
const substantial = (text: string) => text.replace(WIKILINK, "").replace(/[^\p{L}\p{N}]+/gu, "").length >= 6;

/**
 * Splits a Markdown body into memory-sized pieces with marked's lexer: each
 * top-level bullet is a piece (its heading as context), runs of paragraphs,
 * code and quotes under one heading are one piece (split at blocks past
 * IMPORT_ITEM_MAX_CHARS), Basic Memory observations keep their category and
 * relation bullets become relations. A short note (wholeIfSmall) is one piece.
 */
export function splitMarkdown(body: string, opts: SplitOptions): SplitDocument {
  if (opts.wholeIfSmall && body.length <= IMPORT_SMALL_NOTE_CHARS && !BLOCK_START.test(body)) {
    // Plain prose (most notes of a vault): one piece, without the lexer (a third of a note's read time).
    const text = body.trim();
    const withTitle = opts.title && !text.toLowerCase().includes(opts.title.toLowerCase()) ? `${opts.title}\n\n${text}` : text;
    return {
      pieces: substantial(text) ? [{ text: withTitle, line: opts.bodyLine, category: null, tags: inlineTags(text), links: wikilinkTargets(text) }] : [],
      relations: [],
    };
  }
  const relations: SplitDocument["relations"] = [];
  const pieces: Piece[] = [];
  const tokens = marked.lexer(body);
  const headings: string[] = [];
  // Basic Memory's section names say nothing about the content: the note's title does.
  const context = () => {
    const h = headings.filter((x) => x && !/^(observations|relations)$/i.test(x)).at(-1);
    if (!h) return opts.title;
    return opts.title && h.toLowerCase() !== opts.title.toLowerCase() ? `${opts.title} — ${h}` : h;
  };
  let prose: { raw: string; offset: number }[] = [];
  let offset = 0;
  let hasObservations = false;

  const push = (text: string, at: number, category: string | null = null) => {
    const t = text.trim();
    if (!substantial(t)) return;
    pieces.push({ text: t, line: opts.bodyLine + lineAt(body, at), category, tags: inlineTags(t), links: wikilinkTargets(t) });
  };
  const flush = () => {
    if (prose.length === 0) return;
    const head = context();
    let chunk: typeof prose = [];
    let size = 0;
    const emit = () => {
      if (!chunk.length) return;
      const text = chunk.map((c) => c.raw.trim()).join("\n\n");
      push(head && !text.startsWith(head) ? `${head}\n\n${text}` : text, chunk[0].offset);
      chunk = [];
      size = 0;
    };
    for (const p of prose) {
      if (size > 0 && size + p.raw.length > IMPORT_ITEM_MAX_CHARS) emit();
      chunk.push(p);
      size += p.raw.length;
    }
    emit();
    prose = [];
  };

  for (const token of tokens as Token[]) {
    const at = offset;
    offset += token.raw.length;
    if (token.type === "heading") {
      flush();
      const h = token as Tokens.Heading;
      headings.length = h.depth - 1;
      headings[h.depth - 1] = h.text.trim();
      continue;
    }
    if (token.type === "list") {
      flush();
      const list = token as Tokens.List;
      let cursor = 0;
      for (const item of list.items) {
        const start = list.raw.indexOf(item.raw, cursor);
        cursor = start >= 0 ? start + item.raw.length : cursor;
        const text = dedentItem(item.raw);
        const rel = RELATION.exec(text);
        if (rel) {
          const weight = rel[3] ? /^weight\s+([01](?:\.\d+)?)$/.exec(rel[3].trim()) : null;
          relations.push({ relationship: rel[1], target: rel[2].trim(), weight: weight ? Number(weight[1]) : null });
          continue;
        }
        const obs = OBSERVATION.exec(text);
        // A task list's "[ ]" / "[x]" is no category.
        if (obs && !/^[ xX]$/.test(obs[1])) {
          hasObservations = true;
          const head = context();
          push(head ? `${head}: ${obs[2]}` : obs[2], at + Math.max(0, start), obs[1].trim().toLowerCase());
          continue;
        }
        const head = context();
        push(head ? `${head}: ${text}` : text, at + Math.max(0, start));
      }
      continue;
    }
    if (token.type === "space" || token.type === "def") continue;
    if (token.type === "hr") {
      flush();
      continue;
    }
    prose.push({ raw: token.raw, offset: at });
  }
  flush();

  if (opts.wholeIfSmall && !hasObservations && body.trim().length <= IMPORT_SMALL_NOTE_CHARS && pieces.length > 1) {
    // Relation bullets stay relations; the rest of a short note is one memory.
    const text = body
      .split("\n")
      .filter((l) => !(/^\s*[-*+]\s/.test(l) && RELATION.test(l.replace(/^\s*[-*+]\s+/, ""))))
      .join("\n")
      .replace(/\n{3,}/g, "\n\n")
      .trim();
    const withTitle = opts.title && !text.toLowerCase().includes(opts.title.toLowerCase()) ? `${opts.title}\n\n${text}` : text;
    return { pieces: [{ text: withTitle, line: opts.bodyLine, category: null, tags: inlineTags(text), links: wikilinkTargets(text) }], relations };
  }
  if (opts.title && pieces.length === 0 && substantial(opts.title) && relations.length > 0) {
    // A note that only relates others still needs a memory for its links to start from.
    pieces.push({ text: opts.title, line: opts.bodyLine, category: null, tags: [], links: [] });
  }
  return { pieces, relations };
}

/** A list item's text without its marker (and task box), nested lines dedented. */
function dedentItem(raw: string): string {
  const lines = raw.replace(/\n+$/, "").split("\n");
  const first = lines[0].replace(/^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?/, "");
  const indent = Math.min(
    ...lines
      .slice(1)
      .filter((l) => l.trim())
      .map((l) => /^\s*/.exec(l)![0].length),
    Infinity,
  );
  const rest = lines.slice(1).map((l) => (Number.isFinite(indent) ? l.slice(indent) : l));
  return [first, ...rest].join("\n").trim();
}
