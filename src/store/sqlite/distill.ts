import type { Statement } from "bun:sqlite";
import type { DistillMemoryRow, DistillStore } from "../../core/distill";
import type { SqliteHandle } from "./storage";

/** distill/ on SQLite. Statements are prepared once per handle. */
export function sqliteDistill(h: SqliteHandle): DistillStore {
  const db = h.sqlite;
  const cache = new Map<string, Statement>();
  const q = (text: string): Statement => {
    let st = cache.get(text);
    if (!st) cache.set(text, (st = db.query(text)));
    return st;
  };
  return {
    async segmentCount(key) {
      const row = q("SELECT memory_count AS n FROM segments WHERE key = ?").get(key) as { n: number } | null;
      return row ? row.n : null;
    },
    claimSegment(key, sessionId, at) {
      // The primary key decides: a second claim inserts nothing (one writer at a time on SQLite).
      return h.write(
        () =>
          q("INSERT INTO segments(key, session_id, memory_count, created_at) VALUES (?, ?, 0, ?) ON CONFLICT(key) DO NOTHING").run(key, sessionId, at)
            .changes === 1,
      );
    },
    async setSegmentCount(key, count) {
      await h.write(() => q("UPDATE segments SET memory_count = ? WHERE key = ?").run(count, key));
    },
    async memoriesBySeq(seqs) {
      if (seqs.length === 0) return [];
      return q("SELECT seq, id, content, project FROM memories WHERE seq IN (SELECT value FROM json_each(?))").all(JSON.stringify(seqs)) as DistillMemoryRow[];
    },
    async idsWithPrefix(prefix, limit) {
      return (q("SELECT id FROM memories WHERE id >= ? AND id < ? ORDER BY id LIMIT ?").all(prefix, `${prefix}~`, limit) as { id: string }[]).map((r) => r.id);
    },
    async mergeTarget(id) {
      return (q("SELECT seq, strength FROM memories WHERE id = ?").get(id) as { seq: number; strength: number } | null) ?? null;
    },
    async strengthen(seq, strength, now) {
      await h.write(() => q("UPDATE memories SET strength = ?, refreshed_at = ? WHERE seq = ?").run(strength, now, seq));
    },
    async rewrite(seq, content, vector, strength, now) {
      await h.write(() =>
        db.transaction(() => {
          q("UPDATE memories SET content = ?, strength = ?, refreshed_at = ?, updated_at = ? WHERE seq = ?").run(content, strength, now, now, seq);
          q("UPDATE memory_vec SET embedding = ? WHERE rowid = ?").run(vector, BigInt(seq));
        })(),
      );
    },
    async recordDropped(at, dropped) {
      if (dropped.length === 0) return;
      await h.write(() =>
        db.transaction(() => {
          for (const d of dropped) q("INSERT INTO distill_dropped(at, reason, content) VALUES (?, ?, ?)").run(at, d.reason, d.content);
        })(),
      );
    },
  };
}
