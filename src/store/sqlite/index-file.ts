import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { DIMENSIONS } from "../../embed/types";
import type { IndexSnapshot, VectorIndex } from "../../core/search/vector-index";

/**
 * The in-memory vector index saved next to the database, so a restart reads
 * one file (~40 MB at 100k, tens of ms) instead of re-reading and
 * re-quantising every vec0 row (~1-2 s at 100k). It is only a cache: the
 * header names the embedder and the vector_changes row it is current to, and
 * the loader replays the log past that row or falls back to vec0.
 */
const MAGIC = "memsvc-vindex-1\n";

export interface IndexFileHeader {
  embedder: string;
  /** vector_changes id the snapshot includes. */
  cursor: number;
  count: number;
  dims: number;
  groupNames: string[];
}

export const indexFileOf = (dbFile: string) => `${dbFile}.vindex`;

export function saveIndexFile(file: string, index: VectorIndex, embedder: string, cursor: number): void {
  const snap = index.snapshot();
  const header: IndexFileHeader = { embedder, cursor, count: snap.seqs.length, dims: DIMENSIONS, groupNames: snap.groupNames };
  const head = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length);
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, "w", 0o600);
  try {
    for (const part of [Buffer.from(MAGIC), len, head, snap.seqs, snap.groups, snap.scales, snap.sums, snap.rows]) {
      writeSync(fd, part instanceof Buffer ? part : new Uint8Array(part.buffer, part.byteOffset, part.byteLength));
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

export type SavedIndex = { header: IndexFileHeader; snap: IndexSnapshot };

/** The saved snapshot and its header, or null when absent or unreadable. Read asynchronously: the server answers meanwhile. */
export async function readIndexFile(file: string): Promise<SavedIndex | null> {
  let buf: Buffer;
  try {
    buf = await readFile(file);
  } catch {
    return null;
  }
  try {
    if (buf.toString("utf8", 0, MAGIC.length) !== MAGIC) return null;
    let at = MAGIC.length;
    const headLen = buf.readUInt32LE(at);
    at += 4;
    const header = JSON.parse(buf.toString("utf8", at, at + headLen)) as IndexFileHeader;
    at += headLen;
    const n = header.count;
    if (header.dims !== DIMENSIONS || !Number.isInteger(n) || n < 0 || buf.length !== at + n * (16 + DIMENSIONS)) return null;
    // Copies, not views: the file buffer's offsets are not 4-byte aligned.
    const take = (bytes: number) => {
      const part = new Uint8Array(bytes);
      part.set(buf.subarray(at, at + bytes));
      at += bytes;
      return part.buffer;
    };
    const snap: IndexSnapshot = {
      groupNames: header.groupNames,
      seqs: new Int32Array(take(n * 4)),
      groups: new Int32Array(take(n * 4)),
      scales: new Float32Array(take(n * 4)),
      sums: new Int32Array(take(n * 4)),
      rows: new Int8Array(take(n * DIMENSIONS)),
    };
    return { header, snap };
  } catch {
    return null;
  }
}

export function removeIndexFile(file: string): void {
  rmSync(file, { force: true });
}
