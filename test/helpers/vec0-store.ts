import { join } from "node:path";
import { DIMENSIONS } from "../../src/embed/types";
import { openStore, type Store } from "../../src/store/sqlite/open";

/** A deterministic dense vector, some entries exactly 0 or -0 (the quantiser's edge cases). */
export function vectorOf(seed: number): Float32Array {
  let x = seed * 2654435761;
  const v = new Float32Array(DIMENSIONS);
  for (let i = 0; i < DIMENSIONS; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    v[i] = i % 17 === 0 ? 0 : i % 19 === 0 ? -0 : (x / 2147483648 - 0.5) * 0.3;
  }
  return v;
}

/** A SQLite store at `file` with `n` memories and their vectors (vec0 chunks of 1024), projects cycling through a few and none. */
export function vec0StoreWith(dir: string, name: string, n: number): Store {
  const store = openStore(join(dir, name));
  const db = store.sqlite;
  const mem = db.prepare(
    "INSERT INTO memories(id, content, memory_type, project, created_at, updated_at, refreshed_at) VALUES (?, ?, 'knowledge', ?, 1, 1, 1)",
  );
  const vec = db.prepare("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)");
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const { lastInsertRowid } = mem.run(`m${i}`, `note ${i}`, i % 5 === 4 ? null : `p${i % 3}`);
      vec.run(BigInt(lastInsertRowid), vectorOf(i));
    }
  })();
  return store;
}

/**
 * What a load from vec0 must cope with: deleted memories (their vec0 slots
 * cleared by the trigger), a vector re-written (vec0 moves it to its last
 * chunk), a project move, and a vector whose memory is gone (the row scan's
 * join leaves it out). Leaves foreign keys off.
 */
export function awkwardWrites(store: Store): void {
  const db = store.sqlite;
  db.run("DELETE FROM memories WHERE seq IN (5, 6, 700, 1500, 2500)");
  const moved = db.query<{ e: Uint8Array }, []>("SELECT embedding e FROM memory_vec WHERE rowid = 10").get()!.e;
  db.run("DELETE FROM memory_vec WHERE rowid = 10");
  db.query("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)").run(10n, moved);
  db.run("UPDATE memories SET project = 'elsewhere' WHERE seq = 2000");
  db.run("PRAGMA foreign_keys = OFF");
  db.query("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)").run(9999n, vectorOf(9999));
}
