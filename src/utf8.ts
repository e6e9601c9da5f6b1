import { readFileSync } from "node:fs";
import { isUtf8 } from "node:buffer";

/**
 * Files memsvc reads as text (config.json, transcripts) must be UTF-8. The
 * lenient default turns every invalid byte into U+FFFD, and the damage would
 * be stored (a memory, a token) without a word: such files are refused,
 * naming the file and where the first bad byte is.
 */
export class NotUtf8Error extends Error {
  constructor(
    readonly file: string,
    /** Byte offset of the first invalid byte in the file. */
    readonly offset: number,
    readonly line: number,
    readonly byte: number,
  ) {
    super(
      `${file}: not UTF-8 text (line ${line}: byte 0x${byte.toString(16).toUpperCase().padStart(2, "0")} at offset ${offset}; saved as Latin-1 or Windows-1252?): convert it to UTF-8`,
    );
    this.name = "NotUtf8Error";
  }
}

const strict = new TextDecoder("utf-8", { fatal: true });

/** Length of the valid UTF-8 sequence starting at `i`, or 0 when it is invalid (overlongs, surrogates and > U+10FFFF included). */
function sequenceAt(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < b.length && b[i + k] >= lo && b[i + k] <= hi;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) return cont(1, c === 0xe0 ? 0xa0 : 0x80, c === 0xed ? 0x9f : 0xbf) && cont(2) ? 3 : 0;
  if (c >= 0xf0 && c <= 0xf4) return cont(1, c === 0xf0 ? 0x90 : 0x80, c === 0xf4 ? 0x8f : 0xbf) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

/** Byte offset of the first byte that is not part of valid UTF-8, or -1. Slow path: only run once a check failed. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const n = sequenceAt(bytes, i);
    if (n === 0) return i;
    i += n;
  }
  return -1;
}

/** The error for `bytes` (read from `file` at `base`), or null when they are valid UTF-8. */
export function utf8Problem(file: string, bytes: Uint8Array, base = 0, firstLine = 1): NotUtf8Error | null {
  if (isUtf8(bytes)) return null;
  const at = Math.max(0, firstInvalidUtf8(bytes));
  let line = firstLine;
  for (let i = bytes.indexOf(10); i >= 0 && i < at; i = bytes.indexOf(10, i + 1)) line++;
  return new NotUtf8Error(file, base + at, line, bytes[at] ?? 0);
}

/** Decodes, refusing invalid UTF-8 (a leading BOM is dropped, as editors on Windows write one). */
export function decodeUtf8File(file: string, bytes: Uint8Array): string {
  try {
    return strict.decode(bytes);
  } catch {
    throw utf8Problem(file, bytes) ?? new NotUtf8Error(file, 0, 1, bytes[0] ?? 0);
  }
}

/** A whole text file, refused with NotUtf8Error unless it is UTF-8. */
export function readUtf8File(file: string): string {
  return decodeUtf8File(file, readFileSync(file));
}
