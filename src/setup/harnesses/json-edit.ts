import {
  applyEdits,
  findNodeAtLocation,
  modify,
  parse,
  parseTree,
  printParseErrorCode,
  type FormattingOptions,
  type JSONPath,
  type Node,
  type ParseError,
} from "jsonc-parser";
import { WiringError } from "./types";

/**
 * Format-preserving edits of JSON and JSONC files through jsonc-parser: only
 * the property being set or removed is rewritten, so the user's comments,
 * key order, indentation and everything else stay byte-identical.
 */

type Json = Record<string, any>;

/** The document as an object; absent/blank is {}. `file` names it in the message when it is not an object. */
export function readJsonc(text: string | null, file: string, opts: { comments: boolean }): Json {
  if (text === null || text.trim() === "") return {};
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: opts.comments, disallowComments: !opts.comments });
  if (errors.length > 0) {
    const e = errors[0]!;
    const line = text.slice(0, e.offset).split("\n").length;
    throw new WiringError(
      `${file} is not valid ${opts.comments ? "JSONC" : "JSON"} (${printParseErrorCode(e.error)} at line ${line}); fix it by hand first, nothing was changed`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new WiringError(`${file} does not hold a JSON object; nothing was changed`);
  return value as Json;
}

/** The file's own indentation and line ending, so inserted entries look like their neighbours. */
export function formattingOf(text: string): FormattingOptions {
  const eol = text.includes("\r\n") ? "\r\n" : "\n";
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? "  ";
  return indent.startsWith("\t") ? { insertSpaces: false, tabSize: 1, eol } : { insertSpaces: true, tabSize: indent.length, eol };
}

/** Sets (or, with undefined, removes) the value at `path`; an absent/blank document starts as `{}`. */
export function setJson(text: string | null, path: JSONPath, value: unknown): string {
  const base = text === null || text.trim() === "" ? "{}\n" : text;
  if (value === undefined) return removeProperty(base, path);
  const root = parseTree(base, [], { allowTrailingComma: true })!;
  const node = findNodeAtLocation(root, path);
  const fmt = formattingOf(base);
  if (node) return replaceRange(base, node.offset, node.length, pretty(value, fmt, lineIndent(base, node.parent?.offset ?? node.offset)));
  // The deepest object that exists takes the rest of the path as one nested value.
  let depth = path.length - 1;
  while (depth > 0 && !findNodeAtLocation(root, path.slice(0, depth))) depth--;
  const holder = depth === 0 ? root : findNodeAtLocation(root, path.slice(0, depth))!;
  if (holder.type !== "object") throw new WiringError(`"${path.slice(0, depth).join(".")}" is not an object`);
  let nested: unknown = value;
  for (let i = path.length - 1; i > depth; i--) nested = { [path[i]!]: nested };
  return insertProperty(base, holder, String(path[depth]), nested, fmt);
}

function unit(fmt: FormattingOptions): string {
  return fmt.insertSpaces ? " ".repeat(fmt.tabSize ?? 2) : "\t";
}

function pretty(value: unknown, fmt: FormattingOptions, indent: string): string {
  return JSON.stringify(value, null, unit(fmt)).split("\n").join(`${fmt.eol}${indent}`);
}

function replaceRange(text: string, offset: number, length: number, content: string): string {
  return text.slice(0, offset) + content + text.slice(offset + length);
}

function lineStartOf(text: string, offset: number): number {
  let i = offset;
  while (i > 0 && text[i - 1] !== "\n") i--;
  return i;
}

function lineIndent(text: string, offset: number): string {
  return /^[ \t]*/.exec(text.slice(lineStartOf(text, offset)))![0];
}

/** End of the line that holds `offset` (before its line break). */
function lineEndOf(text: string, offset: number): number {
  let i = offset;
  while (i < text.length && text[i] !== "\n" && text[i] !== "\r") i++;
  return i;
}

/**
 * A new `"key": value` line after the object's last property (or into an
 * empty object), indented like its siblings; the comma style of the file
 * (trailing comma or not) is kept. Nothing else in the text moves.
 */
function insertProperty(text: string, object: Node, key: string, value: unknown, fmt: FormattingOptions): string {
  const props = object.children ?? [];
  if (props.length === 0) {
    const outer = lineIndent(text, object.offset);
    const inner = outer + unit(fmt);
    const body = `${JSON.stringify(key)}: ${pretty(value, fmt, inner)}`;
    return replaceRange(text, object.offset, object.length, `{${fmt.eol}${inner}${body}${fmt.eol}${outer}}`);
  }
  const last = props[props.length - 1]!;
  const indent = lineIndent(text, last.offset);
  const body = `${JSON.stringify(key)}: ${pretty(value, fmt, indent)}`;
  const lastEnd = last.offset + last.length;
  let i = lastEnd;
  while (text[i] === " " || text[i] === "\t") i++;
  const trailingComma = text[i] === ",";
  // After the line's own comment, if any: a comment stays with the property it describes.
  const at = lineEndOf(text, lastEnd);
  const closer = object.offset + object.length - 1;
  if (at >= closer) {
    // The last property shares its line with the closing brace: insert before the brace.
    return `${text.slice(0, lastEnd)}${trailingComma ? "" : ","} ${body}${text.slice(lastEnd)}`;
  }
  const line = `${fmt.eol}${indent}${body}${trailingComma ? "," : ""}`;
  const withLine = replaceRange(text, at, 0, line);
  return trailingComma ? withLine : replaceRange(withLine, lastEnd, 0, ",");
}

/**
 * Removes the property (or array element) at `path`: whole lines when it
 * sits on lines of its own (the inverse of insertProperty and appendJson,
 * so insert-then-remove gives back the same bytes), else jsonc-parser's own
 * removal.
 */
function removeProperty(text: string, path: JSONPath): string {
  const root = parseTree(text, [], { allowTrailingComma: true });
  const valueNode = root && findNodeAtLocation(root, path);
  if (!valueNode?.parent) return text;
  const cut = valueNode.parent.type === "property" ? valueNode.parent : valueNode;
  const container = cut.parent;
  if (!container) return text;
  const siblings = container.children ?? [];
  const index = siblings.indexOf(cut);
  const start = lineStartOf(text, cut.offset);
  const onOwnLine = /^[ \t]*$/.test(text.slice(start, cut.offset));
  let end = cut.offset + cut.length;
  while (text[end] === " " || text[end] === "\t") end++;
  const hadComma = text[end] === ",";
  if (hadComma) end++;
  while (text[end] === " " || text[end] === "\t") end++;
  const endsLine = end >= text.length || text[end] === "\n" || text[end] === "\r";
  if (onOwnLine && endsLine && start > 0) {
    const isLast = index === siblings.length - 1;
    if (siblings.length === 1) {
      // The container becomes empty: its brackets close up as they would have been written.
      const closer = container.offset + container.length - 1;
      if (/^[ \t]*$/.test(text.slice(lineStartOf(text, closer), closer)))
        return replaceRange(text, container.offset, container.length, container.type === "array" ? "[]" : "{}");
    }
    // From the line break before it to the end of its last line.
    let from = start;
    if (text[from - 1] === "\n") from--;
    if (text[from - 1] === "\r") from--;
    let out = text.slice(0, from) + text.slice(end);
    if (isLast && !hadComma && index > 0) {
      const prev = siblings[index - 1]!;
      let c = prev.offset + prev.length;
      while (out[c] === " " || out[c] === "\t") c++;
      if (out[c] === ",") out = replaceRange(out, c, 1, "");
    }
    return out;
  }
  return applyEdits(text, modify(text, path, undefined, {}));
}

/** Appends `value` to the array at `path` on a line of its own, indented like its elements. */
export function appendJson(text: string, path: JSONPath, value: unknown): string {
  const root = parseTree(text, [], { allowTrailingComma: true });
  const array = root && findNodeAtLocation(root, path);
  if (array?.type !== "array") throw new WiringError(`"${path.join(".")}" is not a list`);
  const fmt = formattingOf(text);
  const items = array.children ?? [];
  if (items.length === 0) {
    const outer = lineIndent(text, array.offset);
    const inner = outer + unit(fmt);
    return replaceRange(text, array.offset, array.length, `[${fmt.eol}${inner}${pretty(value, fmt, inner)}${fmt.eol}${outer}]`);
  }
  const last = items[items.length - 1]!;
  const indent = lineIndent(text, last.offset);
  const body = pretty(value, fmt, indent);
  const lastEnd = last.offset + last.length;
  let i = lastEnd;
  while (text[i] === " " || text[i] === "\t") i++;
  const trailingComma = text[i] === ",";
  const at = lineEndOf(text, lastEnd);
  if (at >= array.offset + array.length - 1) return `${text.slice(0, lastEnd)}${trailingComma ? "" : ","} ${body}${text.slice(lastEnd)}`;
  const withLine = replaceRange(text, at, 0, `${fmt.eol}${indent}${body}${trailingComma ? "," : ""}`);
  return trailingComma ? withLine : replaceRange(withLine, lastEnd, 0, ",");
}

/** Whether `path` exists in the document (a key whose value is null counts). */
export function hasPath(text: string, path: JSONPath): boolean {
  const root = parseTree(text, [], { allowTrailingComma: true });
  return root !== undefined && findNodeAtLocation(root, path) !== undefined;
}

/** Removes `path` and then each parent object (deepest first, above `keepDepth`) that this left empty. */
export function removeJson(text: string, path: JSONPath, keepDepth = 0): string {
  if (!hasPath(text, path)) return text;
  let out = setJson(text, path, undefined);
  for (let depth = path.length - 1; depth > keepDepth; depth--) {
    const parent = path.slice(0, depth);
    const value = valueAt(out, parent);
    if (value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0) out = setJson(out, parent, undefined);
    else break;
  }
  return out;
}

export function valueAt(text: string | null, path: JSONPath): unknown {
  if (text === null || text.trim() === "") return undefined;
  let v: any = parse(text, [], { allowTrailingComma: true });
  for (const key of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = v[key as any];
  }
  return v;
}

/** Deep equality over JSON values, key order ignored (for "already installed"). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => sameJson(x, (b as unknown[])[i]));
  const ka = Object.keys(a as Json);
  const kb = Object.keys(b as Json);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b as Json, k) && sameJson((a as Json)[k], (b as Json)[k]));
}

/** A document that holds nothing: blank, or an empty object (what remains of a file memsvc created). */
export function isEmptyDocument(text: string): boolean {
  if (text.trim() === "") return true;
  const v = parse(text, [], { allowTrailingComma: true });
  return v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0;
}
