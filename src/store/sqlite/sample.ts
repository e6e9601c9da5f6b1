import type { Database } from "bun:sqlite";
import type { Pause } from "../../core/search/store";
import { shuffle } from "../../core/shuffle";

/** Picks between pauses: each is one or two b-tree lookups (~2-20 us at 100k). */
const PICKS_PER_PAUSE = 64;
/** Rows read per statement once picked: 64 random rows' contents measured ~1 ms at 100k. */
const READS_PER_PAUSE = 64;

/**
 * Up to `n` distinct random seqs of memories at or below `upTo`, uniform over
 * the rows: a random seq between the lowest and the highest is kept only if
 * that row exists, so no row counts more for following a gap. A store that
 * lost most of its rows (a hit per 8 tries at worst) takes the row after a
 * missed seq instead, slightly favouring rows after gaps: a sample either
 * way. A store of at most 2n rows is read whole and shuffled.
 *
 * Why not `ORDER BY random() LIMIT n`: that computes a random number for
 * every row and sorts them in one statement, which holds the event loop
 * (23 ms at 100k for the seqs alone, 36-53 ms with contents, measured),
 * and the callers run beside live traffic. These lookups run in slices.
 */
export async function randomSeqs(db: Database, n: number, upTo: number, pause?: Pause): Promise<number[]> {
  if (n <= 0) return [];
  const few = db.query<{ seq: number }, [number, number]>("SELECT seq FROM memories WHERE seq <= ? ORDER BY seq LIMIT ?").all(upTo, 2 * n + 1);
  if (few.length <= 2 * n) return shuffle(few.map((r) => r.seq)).slice(0, n);
  const range = db.query<{ lo: number; hi: number }, [number]>("SELECT min(seq) AS lo, max(seq) AS hi FROM memories WHERE seq <= ?").get(upTo)!;
  const exact = db.query<{ seq: number }, [number]>("SELECT seq FROM memories WHERE seq = ?");
  const after = db.query<{ seq: number }, [number]>("SELECT seq FROM memories WHERE seq >= ? ORDER BY seq LIMIT 1");
  const picked = new Set<number>();
  const span = range.hi - range.lo + 1;
  for (let tries = 0; picked.size < n && tries < 16 * n; tries++) {
    const at = range.lo + Math.floor(Math.random() * span);
    const row = tries < 8 * n ? exact.get(at) : after.get(at);
    if (row && row.seq <= upTo) picked.add(row.seq);
    if (tries % PICKS_PER_PAUSE === PICKS_PER_PAUSE - 1) await pause?.();
  }
  return [...picked];
}

/** The first `chars` characters of the memories `seqs`, READS_PER_PAUSE rows a statement. */
export async function contentsOf(db: Database, seqs: readonly number[], chars: number, pause?: Pause): Promise<string[]> {
  const read = db.query<{ text: string }, [number, string]>("SELECT substr(content, 1, ?) AS text FROM memories WHERE seq IN (SELECT value FROM json_each(?))");
  const out: string[] = [];
  for (let i = 0; i < seqs.length; i += READS_PER_PAUSE) {
    for (const r of read.all(chars, JSON.stringify(seqs.slice(i, i + READS_PER_PAUSE)))) out.push(r.text);
    await pause?.();
  }
  return out;
}

/**
 * The stored vectors of `seqs`, one vec0 lookup at a time: each reads its
 * chunk's blob (~0.5 ms at 100k, measured; a `rowid IN (...)` over vec0
 * scans every chunk, 210-220 ms for 400 rows in one statement).
 */
export async function vectorsOf(db: Database, seqs: readonly number[], pause?: Pause): Promise<{ seq: number; vector: Float32Array }[]> {
  const read = db.query<{ embedding: Uint8Array }, [number]>("SELECT embedding FROM memory_vec WHERE rowid = ?");
  const out: { seq: number; vector: Float32Array }[] = [];
  for (const seq of seqs) {
    const row = read.get(seq);
    if (row) out.push({ seq, vector: new Float32Array(row.embedding.buffer, row.embedding.byteOffset, row.embedding.byteLength / 4).slice() });
    await pause?.();
  }
  return out;
}
