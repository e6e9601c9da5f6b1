import type { Services } from "../../src/core/services";
import { dbRow } from "./engine";

/**
 * The vector stored for memory `seq`, as numbers (float32 values), on either
 * engine: SQLite's vec0 row (a BLOB keyed by rowid) or PostgreSQL's pgvector
 * column (text, keyed by seq). null when there is none.
 */
export async function storedVector(s: Services, seq: number): Promise<number[] | null> {
  const r = await dbRow<{ e: unknown }>(
    s,
    s.config.storage === "postgres" ? "SELECT embedding::text AS e FROM memory_vec WHERE seq = ?" : "SELECT embedding AS e FROM memory_vec WHERE rowid = ?",
    [seq],
  );
  if (!r) return null;
  if (r.e instanceof Uint8Array) return Array.from(new Float32Array(r.e.buffer, r.e.byteOffset, r.e.byteLength / 4));
  return Array.from(new Float32Array(JSON.parse(String(r.e)) as number[]));
}
