import { openStore } from "../../src/store/sqlite";

export interface StoreCheck {
  memories: number;
  /** Everything that is wrong; empty when the database is whole. */
  problems: string[];
  /** Memory count per source_session. */
  perSession: Map<string, number>;
  ids: Set<string>;
}

/**
 * Opens a (stopped) server's database and checks what a crash or a failed
 * write could break: SQLite's own integrity check, FTS5's, exactly one
 * vector and one FTS row per memory, no orphan vector/tag/link/domain row,
 * and link counts that match the links.
 */
export function checkStore(dbFile: string): StoreCheck {
  const store = openStore(dbFile);
  const db = store.sqlite;
  const problems: string[] = [];
  try {
    const integrity = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all().map((r) => r.integrity_check);
    if (integrity.join() !== "ok") problems.push(`integrity_check: ${integrity.join("; ")}`);
    try {
      db.run("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')");
    } catch (e) {
      problems.push(`FTS integrity-check: ${(e as Error).message}`);
    }
    const seqs = db.query<{ seq: number; id: string; session: string | null }, []>("SELECT seq, id, source_session AS session FROM memories").all();
    const seqSet = new Set(seqs.map((r) => r.seq));
    const ids = new Set(seqs.map((r) => r.id));
    const vec = db.query<{ rowid: number }, []>("SELECT rowid FROM memory_vec").all().map((r) => r.rowid);
    const fts = db.query<{ rowid: number }, []>("SELECT rowid FROM memories_fts").all().map((r) => r.rowid);
    const compare = (name: string, rows: number[]) => {
      const set = new Set(rows);
      if (set.size !== rows.length) problems.push(`${name}: duplicate rows`);
      const missing = [...seqSet].filter((s) => !set.has(s));
      const orphan = rows.filter((s) => !seqSet.has(s));
      if (missing.length) problems.push(`${missing.length} memories without a ${name} row (seq ${missing.slice(0, 5).join(", ")})`);
      if (orphan.length) problems.push(`${orphan.length} orphan ${name} rows (rowid ${orphan.slice(0, 5).join(", ")})`);
    };
    compare("memory_vec", vec);
    compare("memories_fts", fts);
    const orphans: [string, string][] = [
      ["memory_tags", "SELECT count(*) AS n FROM memory_tags t WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = t.memory_id)"],
      ["links", "SELECT count(*) AS n FROM links l WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = l.from_id) OR NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = l.to_id)"],
      ["memory_primary_domain", "SELECT count(*) AS n FROM memory_primary_domain d WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = d.memory_id)"],
      ["memory_events", "SELECT count(*) AS n FROM memory_events e WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = e.memory_id)"],
      [
        "link_count",
        "SELECT count(*) AS n FROM memories m WHERE m.link_count != (SELECT count(*) FROM links l WHERE l.from_id = m.id OR l.to_id = m.id)",
      ],
    ];
    for (const [name, sql] of orphans) {
      const n = db.query<{ n: number }, []>(sql).get()!.n;
      if (n > 0) problems.push(`${n} inconsistent ${name} rows`);
    }
    const perSession = new Map<string, number>();
    for (const r of seqs) if (r.session) perSession.set(r.session, (perSession.get(r.session) ?? 0) + 1);
    return { memories: seqs.length, problems, perSession, ids };
  } finally {
    store.close();
  }
}
