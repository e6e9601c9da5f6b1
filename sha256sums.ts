import { createHash } from "node:crypto";
import { createReadStream, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The release folder's SHA256SUMS (the format `sha256sum -c`, install.sh and
 * install.ps1 read: "<hex>  <file name>" a line). A build writes the lines of
 * the files it made and keeps the lines of other files still beside them, so
 * `npm run build:all` then `npm run build` leaves all five listed.
 */
export const SUMS_FILE = "SHA256SUMS";

export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** file name -> hash, from SHA256SUMS text; a line that is not a checksum line is dropped (a hand-edited file must not stop a build). */
export function parseSums(text: string): Map<string, string> {
  const sums = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    // "*name" is sha256sum's binary-mode marker.
    const m = /^([0-9a-fA-F]{64}) [ *](.+)$/.exec(line);
    if (m) sums.set(m[2]!, m[1]!.toLowerCase());
  }
  return sums;
}

/**
 * Hashes `files` (names inside `dir`) and writes `dir`/SHA256SUMS: their
 * lines plus the earlier lines of files that still exist there, sorted by
 * name. Returns what it wrote.
 */
export async function mergeSums(dir: string, files: string[]): Promise<Map<string, string>> {
  const path = join(dir, SUMS_FILE);
  const earlier = existsSync(path) ? parseSums(readFileSync(path, "utf8")) : new Map<string, string>();
  const sums = new Map<string, string>();
  for (const [name, hash] of earlier) if (!name.includes("/") && existsSync(join(dir, name))) sums.set(name, hash);
  for (const name of files) sums.set(name, await sha256File(join(dir, name)));
  const sorted = [...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // Written whole then renamed: an interrupted build never leaves a half list that install.sh would trust.
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, sorted.map(([name, hash]) => `${hash}  ${name}\n`).join(""));
  renameSync(temp, path);
  return new Map(sorted);
}
