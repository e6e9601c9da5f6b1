import { parse, TomlError } from "smol-toml";
import { WiringError } from "./types";

/**
 * Surgical edits of Codex's config.toml: smol-toml parses (to read values
 * and to check every result), while the text is edited in place so the
 * user's comments, order and formatting survive. Only two shapes are
 * written: a top-level `notify = [...]` line (TOML wants top-level keys
 * before the first table) and a `[mcp_servers.memsvc]` table at the end.
 */

export interface Statement {
  kind: "header" | "keyval";
  /** Dotted name with quotes taken off: `mcp_servers.memsvc`, `notify`. */
  name: string;
  /** Line start. */
  start: number;
  /** Where the key (or `[`) begins. */
  keyStart: number;
  /** End of the value (before trailing spaces and comment). */
  valueEnd: number;
  /** The line break ending the statement (or the text's end). */
  end: number;
}

export function parseToml(text: string, file: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (e) {
    const where = e instanceof TomlError ? ` at line ${e.line}` : "";
    throw new WiringError(`${file} is not valid TOML${where} (${(e as Error).message.split("\n")[0]}); fix it by hand first, nothing was changed`);
  }
}

function normalizeName(raw: string): string {
  const parts: string[] = [];
  let cur = "";
  let quote: string | null = null;
  for (const c of raw) {
    if (quote) {
      if (c === quote) quote = null;
      else cur += c;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ".") {
      parts.push(cur.trim());
      cur = "";
    } else cur += c;
  }
  parts.push(cur.trim());
  return parts.join(".");
}

/** Index just past a string starting at `i` (basic, literal or multi-line). */
function skipString(text: string, i: number): number {
  const q = text[i]!;
  const triple = text.startsWith(q.repeat(3), i);
  let j = i + (triple ? 3 : 1);
  while (j < text.length) {
    if (q === '"' && text[j] === "\\") j += 2;
    else if (triple ? text.startsWith(q.repeat(3), j) : text[j] === q) {
      j += triple ? 3 : 1;
      // A closing run may carry one or two quotes of content.
      while (triple && text[j] === q) j++;
      return j;
    } else if (!triple && text[j] === "\n") return j;
    else j++;
  }
  return j;
}

/** The statements of a TOML text, in order: table headers and key/value pairs (a value may span lines). */
export function statements(text: string): Statement[] {
  const out: Statement[] = [];
  let i = 0;
  while (i < text.length) {
    const lineStart = i;
    while (text[i] === " " || text[i] === "\t") i++;
    const c = text[i];
    if (c === undefined) break;
    if (c === "\n" || c === "\r" || c === "#") {
      while (i < text.length && text[i] !== "\n") i++;
      i++;
      continue;
    }
    const keyStart = i;
    if (c === "[") {
      const close = text.indexOf("]", i);
      const nameRaw = text.slice(i + (text[i + 1] === "[" ? 2 : 1), close === -1 ? text.length : close);
      let j = close === -1 ? text.length : close + 1;
      if (text[j] === "]") j++;
      const valueEnd = j;
      while (j < text.length && text[j] !== "\n") j++;
      out.push({ kind: "header", name: normalizeName(nameRaw), start: lineStart, keyStart, valueEnd, end: j > 0 && text[j - 1] === "\r" ? j - 1 : j });
      i = j + 1;
      continue;
    }
    // key = value
    let j = i;
    while (j < text.length && text[j] !== "=" && text[j] !== "\n") j = text[j] === '"' || text[j] === "'" ? skipString(text, j) : j + 1;
    const name = normalizeName(text.slice(i, j));
    j++;
    let depth = 0;
    let valueEnd = j;
    while (j < text.length) {
      const d = text[j]!;
      if (d === '"' || d === "'") {
        j = skipString(text, j);
        valueEnd = j;
      } else if (d === "#") {
        while (j < text.length && text[j] !== "\n") j++;
      } else if (d === "\n") {
        if (depth <= 0) break;
        j++;
      } else {
        if (d === "[" || d === "{") depth++;
        else if (d === "]" || d === "}") depth--;
        if (d !== " " && d !== "\t" && d !== "\r") valueEnd = j + 1;
        j++;
      }
    }
    out.push({ kind: "keyval", name, start: lineStart, keyStart, valueEnd, end: j > 0 && text[j - 1] === "\r" ? j - 1 : j });
    i = j + 1;
  }
  return out;
}

export function tomlString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

const tomlKey = (k: string) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : tomlString(k));
export const tomlArray = (items: readonly string[]) => `[${items.map(tomlString).join(", ")}]`;
export const tomlInlineTable = (o: Record<string, string>) =>
  `{ ${Object.entries(o)
    .map(([k, v]) => `${tomlKey(k)} = ${tomlString(v)}`)
    .join(", ")} }`;

const eolOf = (text: string) => (text.includes("\r\n") ? "\r\n" : "\n");

function topLevel(text: string): { keys: Statement[]; firstHeader: Statement | undefined } {
  const all = statements(text);
  const h = all.findIndex((s) => s.kind === "header");
  return { keys: (h === -1 ? all : all.slice(0, h)).filter((s) => s.kind === "keyval"), firstHeader: h === -1 ? undefined : all[h] };
}

/** Sets a top-level `key = <value>`: in place when present (its comment stays), else after the last top-level key or before the first table. */
export function setTopLevel(text: string, key: string, value: string): string {
  const eol = eolOf(text);
  const { keys, firstHeader } = topLevel(text);
  const line = `${key} = ${value}`;
  const found = keys.find((s) => s.name === key);
  if (found) return text.slice(0, found.keyStart) + line + text.slice(found.valueEnd);
  if (keys.length > 0) {
    const at = keys[keys.length - 1]!.end;
    return text.slice(0, at) + eol + line + text.slice(at);
  }
  if (firstHeader) return text.slice(0, firstHeader.start) + line + eol + eol + text.slice(firstHeader.start);
  return text + (text.length > 0 && !text.endsWith("\n") ? eol : "") + line + eol;
}

/** Removes a top-level key's lines (the inverse of setTopLevel's insertion). */
export function removeTopLevel(text: string, key: string): string {
  const { keys, firstHeader } = topLevel(text);
  const found = keys.find((s) => s.name === key);
  if (!found) return text;
  const lineBreak = (at: number) => (text.startsWith("\r\n", at) ? 2 : text[at] === "\n" ? 1 : 0);
  const afterLine = found.end + lineBreak(found.end);
  // Alone above the first table, where insertion put a blank line between them.
  if (keys.length === 1 && firstHeader && lineBreak(afterLine) > 0 && afterLine + lineBreak(afterLine) === firstHeader.start)
    return text.slice(0, found.start) + text.slice(firstHeader.start);
  if (found.start === 0) return text.slice(afterLine);
  // From the line break before it: the line after stays as it was.
  const from = found.start - (text.startsWith("\r\n", found.start - 2) ? 2 : 1);
  return text.slice(0, from) + text.slice(found.end);
}

/** The text ranges of `[name]` and its sub-tables `[name.*]`. */
function tableBlocks(text: string, name: string): { start: number; end: number }[] {
  const all = statements(text);
  const blocks: { start: number; end: number }[] = [];
  all.forEach((s, k) => {
    if (s.kind !== "header" || (s.name !== name && !s.name.startsWith(`${name}.`))) return;
    const next = all.slice(k + 1).find((t) => t.kind === "header");
    blocks.push({ start: s.start, end: next ? next.start : text.length });
  });
  return blocks;
}

export function hasTable(text: string, name: string): boolean {
  return tableBlocks(text, name).length > 0;
}

/** Removes `[name]` (and its sub-tables) with the blank line that separated it, the inverse of appendTable. */
export function removeTable(text: string, name: string): string {
  let out = text;
  for (const b of tableBlocks(text, name).reverse()) {
    let before = out.slice(0, b.start);
    const region = out.slice(b.start, b.end);
    const after = out.slice(b.end);
    if (!/\r?\n\r?\n$/.test(region) && /\r?\n\r?\n$/.test(before)) before = before.replace(/\r?\n$/, "");
    out = before + after;
  }
  return out;
}

/** Appends `[name]` with its keys at the end, after a blank line. */
export function appendTable(text: string, name: string, body: [string, string][]): string {
  const eol = eolOf(text);
  const lines = [`[${name}]`, ...body.map(([k, v]) => `${tomlKey(k)} = ${v}`)].join(eol) + eol;
  if (text.trim() === "") return text + lines;
  return text + (text.endsWith("\n") ? "" : eol) + eol + lines;
}
