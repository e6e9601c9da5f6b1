import type { Database } from "bun:sqlite";
import { DIMENSIONS } from "../../../embed/types";

/**
 * Reads a vec0 table's vectors straight from its shadow tables, one chunk
 * (1024 vectors, one 1.5 MB blob) per query, instead of one vec0 row at a
 * time: at 100k vectors the row scan cost ~1.3-1.5 s of CPU, the chunk reads
 * ~0.4 s. This depends on sqlite-vec 0.1's storage layout (checked below and
 * on every chunk); anything else returns null / throws Vec0LayoutError and the
 * caller reads the rows through vec0 as before.
 *
 * Layout (sqlite-vec 0.1.x, one float vector column, no metadata/partition):
 *   <t>_chunks(chunk_id, size, validity BLOB, rowids BLOB): validity is a
 *     bitmap of `size` bits (bit i = byte i>>3, bit i&7) marking live slots;
 *     rowids holds `size` little-endian int64 rowids.
 *   <t>_vector_chunks00(rowid = chunk_id, vectors BLOB): `size` float32
 *     vectors of DIMENSIONS each, slot i at i * DIMENSIONS.
 * vec0's own full scan walks the same chunks in chunk_id and slot order, so
 * both paths visit the vectors in one order.
 */

export class Vec0LayoutError extends Error {}

/** One chunk's live vectors: `seqs[i]` (a rowid) owns `vectors[i * DIMENSIONS ..]`. */
export interface Vec0Chunk {
  seqs: number[];
  /** Slot in `vectors` of each of `seqs`. */
  slots: number[];
  vectors: Float32Array;
}

const SHADOW_COLUMNS: Record<string, string[]> = {
  chunks: ["chunk_id", "size", "validity", "rowids"],
  rowids: ["rowid", "id", "chunk_id", "chunk_offset"],
  vector_chunks00: ["rowid", "vectors"],
};

/** The chunk reader for `table`, or null when its layout is not the one described above. */
export function vec0Chunks(db: Database, table: string): { count(upTo: number): number; chunks(): Generator<Vec0Chunk> } | null {
  try {
    const version = db.query<{ v: string }, []>("SELECT vec_version() AS v").get()?.v ?? "";
    if (!version.startsWith("v0.1.")) return null;
    const created = db.query<{ value: string }, []>(`SELECT value FROM "${table}_info" WHERE key = 'CREATE_VERSION'`).get()?.value ?? "";
    if (!created.startsWith("v0.1.")) return null;
    for (const [suffix, columns] of Object.entries(SHADOW_COLUMNS)) {
      const have = db
        .query<{ name: string }, []>(`SELECT name FROM pragma_table_info('${table}_${suffix}')`)
        .all()
        .map((c) => c.name);
      if (have.join(",") !== columns.join(",")) return null;
    }
    // A second vector column or metadata columns: another layout than the one handled here.
    const extra = db
      .query<{ n: number }, []>(
        `SELECT count(*) AS n FROM sqlite_master WHERE name GLOB '${table}_vector_chunks*' OR name GLOB '${table}_metadata*' OR name GLOB '${table}_auxiliary'`,
      )
      .get()!.n;
    if (extra !== 1) return null;
  } catch {
    return null;
  }
  return {
    count: (upTo) => db.query<{ n: number }, [number]>(`SELECT count(*) AS n FROM "${table}_rowids" WHERE rowid <= ?`).get(upTo)!.n,
    *chunks() {
      // Chunk after chunk, each its own query and snapshot (the caller replays the change log past its
      // cursor, as for the row scan); chunks created meanwhile are read too: vec0 moves a re-written
      // vector to its newest chunk.
      const next = db.query<{ id: number; size: number; validity: Uint8Array; rowids: Uint8Array; vectors: Uint8Array | null }, [number]>(
        `SELECT c.chunk_id AS id, c.size, c.validity, c.rowids, v.vectors FROM "${table}_chunks" c LEFT JOIN "${table}_vector_chunks00" v ON v.rowid = c.chunk_id WHERE c.chunk_id > ? ORDER BY c.chunk_id LIMIT 1`,
      );
      for (let c = next.get(0); c; c = next.get(c.id)) yield decodeChunk(c.size, c.validity, c.rowids, c.vectors);
    },
  };
}

/** The live slots of one chunk; throws Vec0LayoutError when its blobs are not of the expected sizes. */
export function decodeChunk(size: number, validity: Uint8Array, rowids: Uint8Array, vectors: Uint8Array | null): Vec0Chunk {
  if (!Number.isInteger(size) || size <= 0 || !(validity instanceof Uint8Array) || !(rowids instanceof Uint8Array) || !(vectors instanceof Uint8Array)) {
    throw new Vec0LayoutError("vec0 chunk of an unexpected shape");
  }
  if (validity.byteLength * 8 < size || rowids.byteLength !== size * 8 || vectors.byteLength !== size * DIMENSIONS * 4) {
    throw new Vec0LayoutError(
      `vec0 chunk blobs of unexpected sizes (size ${size}: validity ${validity.byteLength}, rowids ${rowids.byteLength}, vectors ${vectors.byteLength})`,
    );
  }
  // Typed views need aligned offsets; SQLite's blob copies normally are, else copy.
  const ids = new Int32Array(rowids.byteOffset % 4 ? rowids.slice().buffer : rowids.buffer, rowids.byteOffset % 4 ? 0 : rowids.byteOffset, size * 2);
  const floats = new Float32Array(
    vectors.byteOffset % 4 ? vectors.slice().buffer : vectors.buffer,
    vectors.byteOffset % 4 ? 0 : vectors.byteOffset,
    size * DIMENSIONS,
  );
  const seqs: number[] = [];
  const slots: number[] = [];
  for (let i = 0; i < size; i++) {
    if ((validity[i >> 3] & (1 << (i & 7))) === 0) continue;
    const lo = ids[2 * i];
    const hi = ids[2 * i + 1];
    // The index holds 31-bit seqs (memories.seq); anything else is not a layout this reads.
    if (hi !== 0 || lo <= 0) throw new Vec0LayoutError(`vec0 chunk rowid out of range at slot ${i}`);
    seqs.push(lo);
    slots.push(i);
  }
  return { seqs, slots, vectors: floats };
}
