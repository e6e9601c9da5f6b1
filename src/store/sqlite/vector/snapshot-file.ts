import { closeSync, fsyncSync, openSync, renameSync, writeSync } from "node:fs";
import { open, rename, rm, type FileHandle } from "node:fs/promises";
import { INDEX_FILE_READ_BYTES } from "./tuning";
import { DIMENSIONS } from "../../../embed/types";
import type { IndexSnapshot, VectorIndex } from "./vector-index";
import { CODE_BYTES, PROJECTION_ID } from "./projection";

/**
 * The in-memory vector index saved next to the database, so a restart reads
 * one file (~47 MB at 100k, tens of ms) instead of re-reading and
 * re-quantising every vec0 row (~1-2 s at 100k). It is only a cache: the
 * header names the embedder and the vector_changes row it is current to, and
 * the loader replays the log past that row or falls back to vec0.
 *
 * Version 2 adds each row's prefilter code (a float step and CODE_BYTES of
 * 4-bit values) and names the projection they come from; a version 1 file
 * (or codes of another projection) is not read: the index loads from vec0
 * and saves a new file.
 */
const MAGIC = "memsvc-vindex-2\n";

export interface IndexFileHeader {
  embedder: string;
  /** vector_changes id the snapshot includes. */
  cursor: number;
  count: number;
  dims: number;
  /** The projection the prefilter codes come from (projection.ts PROJECTION_ID). */
  codes: string;
  groupNames: string[];
}

/** Bytes a row takes in the file: seq, group, scale, sum and code step (4 each), the int8 row, the code. */
const ROW_BYTES = 20 + DIMENSIONS + CODE_BYTES;

export const indexFileOf = (dbFile: string) => `${dbFile}.vindex`;

/** The file's bytes in order: magic, header length, header, then the snapshot's arrays. */
function fileParts(snap: IndexSnapshot, embedder: string, cursor: number): Uint8Array[] {
  const header: IndexFileHeader = { embedder, cursor, count: snap.seqs.length, dims: DIMENSIONS, codes: PROJECTION_ID, groupNames: snap.groupNames };
  const head = Buffer.from(JSON.stringify(header));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(head.length);
  return [Buffer.from(MAGIC), len, head, ...snapshotParts(snap)].map((part) =>
    part instanceof Buffer ? part : new Uint8Array(part.buffer, part.byteOffset, part.byteLength),
  );
}

/** The snapshot's arrays in file order (the loader reads them back in this order). */
const snapshotParts = (snap: IndexSnapshot) => [snap.seqs, snap.groups, snap.scales, snap.sums, snap.codeSteps, snap.rows, snap.codes];

/** Writes the file at once (shutdown: the process exits next). */
export function saveIndexFile(file: string, index: VectorIndex, embedder: string, cursor: number): void {
  const parts = fileParts(index.snapshot(), embedder, cursor);
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, "w", 0o600);
  try {
    for (const part of parts) writeSync(fd, part);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/**
 * Writes the file of a snapshot (VectorIndex.snapshotInSlices: the caller
 * copies the index between requests) with the event loop free: the writes and
 * the fsync run off the main thread. Written in
 * one go after a load, the 40 MB write and fsync held the event loop 330-800
 * ms at 100k (load ~9), so the first `/health` saying "ready" and every request
 * behind it waited for the disk. Its own temporary name: a shutdown's
 * saveIndexFile may run meanwhile; either rename leaves a whole file.
 */
export async function saveIndexFileInBackground(
  file: string,
  snap: IndexSnapshot,
  embedder: string,
  cursor: number,
  stillWanted: () => boolean = () => true,
): Promise<void> {
  const parts = fileParts(snap, embedder, cursor);
  const tmp = `${file}.tmp-bg`;
  const fh = await open(tmp, "w", 0o600);
  try {
    let position = 0;
    for (const part of parts) {
      for (let done = 0; done < part.byteLength; ) {
        const { bytesWritten } = await fh.write(part, done, part.byteLength - done, position);
        done += bytesWritten;
        position += bytesWritten;
      }
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
  if (stillWanted()) await rename(tmp, file);
  else await rm(tmp, { force: true });
}

/**
 * Reads the saved index straight into the arrays `begin` hands back (the
 * index's own storage: no intermediate buffer, no copies), in slices of
 * INDEX_FILE_READ_BYTES, each an asynchronous read: the server answers
 * between them. `begin` sees the header first and returns null to decline
 * (another embedder, a log that no longer reaches back). The header, or null
 * when the file is absent, unreadable, of another format or declined.
 */
export async function readIndexFileInto(file: string, begin: (header: IndexFileHeader) => IndexSnapshot | null): Promise<IndexFileHeader | null> {
  let fh: FileHandle;
  try {
    fh = await open(file, "r");
  } catch {
    return null;
  }
  try {
    const size = (await fh.stat()).size;
    const head = Buffer.alloc(Math.min(size, MAGIC.length + 4));
    await readFully(fh, head, 0);
    if (head.length < MAGIC.length + 4 || head.toString("utf8", 0, MAGIC.length) !== MAGIC) return null;
    const headLen = head.readUInt32LE(MAGIC.length);
    if (MAGIC.length + 4 + headLen > size) return null;
    const json = Buffer.alloc(headLen);
    await readFully(fh, json, MAGIC.length + 4);
    const header = JSON.parse(json.toString("utf8")) as IndexFileHeader;
    const n = header.count;
    let at = MAGIC.length + 4 + headLen;
    if (
      header.dims !== DIMENSIONS ||
      header.codes !== PROJECTION_ID ||
      !Number.isInteger(n) ||
      n < 0 ||
      !Array.isArray(header.groupNames) ||
      size !== at + n * ROW_BYTES
    )
      return null;
    const into = begin(header);
    if (!into) return null;
    for (const part of snapshotParts(into)) {
      await readFully(fh, new Uint8Array(part.buffer, part.byteOffset, part.byteLength), at);
      at += part.byteLength;
    }
    return header;
  } catch {
    return null;
  } finally {
    await fh.close().catch(() => {});
  }
}

/** Fills `into` from `position` on, INDEX_FILE_READ_BYTES at a time. */
async function readFully(fh: FileHandle, into: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < into.length; ) {
    const len = Math.min(INDEX_FILE_READ_BYTES, into.length - done);
    const { bytesRead } = await fh.read(into, done, len, position + done);
    if (bytesRead === 0) throw new Error("index file ended early");
    done += bytesRead;
  }
}
