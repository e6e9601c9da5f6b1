import { join } from "node:path";
import { openStore } from "../../src/store/sqlite";
import { homeRows, onPostgres } from "./engine";

/** Rows that point at a memory that is gone, and link counts that disagree with the links (both engines' SQL). */
const ORPHANS: [string, string][] = [
  ["memory_tags", "SELECT count(*) AS n FROM memory_tags t WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = t.memory_id)"],
  [
    "links",
    "SELECT count(*) AS n FROM links l WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = l.from_id) OR NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = l.to_id)",
  ],
  ["memory_primary_domain", "SELECT count(*) AS n FROM memory_primary_domain d WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = d.memory_id)"],
  ["memory_events", "SELECT count(*) AS n FROM memory_events e WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = e.memory_id)"],
  ["link_count", "SELECT count(*) AS n FROM memories m WHERE m.link_count != (SELECT count(*) FROM links l WHERE l.from_id = m.id OR l.to_id = m.id)"],
];

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
    const integrity = db
      .query<{ integrity_check: string }, []>("PRAGMA integrity_check")
      .all()
      .map((r) => r.integrity_check);
    if (integrity.join() !== "ok") problems.push(`integrity_check: ${integrity.join("; ")}`);
    try {
      db.run("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')");
    } catch (e) {
      problems.push(`FTS integrity-check: ${(e as Error).message}`);
    }
    const seqs = db.query<{ seq: number; id: string; session: string | null }, []>("SELECT seq, id, source_session AS session FROM memories").all();
    const seqSet = new Set(seqs.map((r) => r.seq));
    const ids = new Set(seqs.map((r) => r.id));
    const vec = db
      .query<{ rowid: number }, []>("SELECT rowid FROM memory_vec")
      .all()
      .map((r) => r.rowid);
    const fts = db
      .query<{ rowid: number }, []>("SELECT rowid FROM memories_fts")
      .all()
      .map((r) => r.rowid);
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
    // /health's counts, kept by trigger (migration 0015).
    for (const table of ["memories", "links"]) {
      const kept = db.query<{ n: number }, [string]>("SELECT n FROM row_counts WHERE name = ?").get(table)?.n;
      const counted = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
      if (kept !== counted) problems.push(`row_counts says ${kept} ${table}, count(*) ${counted}`);
    }
    for (const [name, sql] of ORPHANS) {
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

/**
 * checkStore for a (stopped) server's home on the test engine. On PostgreSQL
 * there is no integrity pragma to run (the server's own WAL recovery is what
 * keeps pages whole) and the full-text vector is a generated column, present
 * by construction: it checks one memory_vec row per memory, no orphan
 * tag/link/domain/event row and link counts that match the links.
 */
export async function checkHome(home: string): Promise<StoreCheck> {
  if (!onPostgres) return checkStore(join(home, "memsvc.db"));
  const problems: string[] = [];
  const seqs = await homeRows<{ seq: number; id: string; session: string | null }>(home, "SELECT seq, id, source_session AS session FROM memories");
  const seqSet = new Set(seqs.map((r) => r.seq));
  const vec = (await homeRows<{ seq: number }>(home, "SELECT seq FROM memory_vec")).map((r) => r.seq);
  const missing = [...seqSet].filter((s) => !vec.includes(s));
  if (missing.length) problems.push(`${missing.length} memories without a memory_vec row (seq ${missing.slice(0, 5).join(", ")})`);
  const noFts = (await homeRows<{ n: number }>(home, "SELECT count(*) AS n FROM memories WHERE fts IS NULL"))[0].n;
  if (noFts > 0) problems.push(`${noFts} memories without a full-text vector`);
  for (const [name, sql] of ORPHANS) {
    const n = (await homeRows<{ n: number }>(home, sql))[0].n;
    if (n > 0) problems.push(`${n} inconsistent ${name} rows`);
  }
  const perSession = new Map<string, number>();
  for (const r of seqs) if (r.session) perSession.set(r.session, (perSession.get(r.session) ?? 0) + 1);
  return { memories: seqs.length, problems, perSession, ids: new Set(seqs.map((r) => r.id)) };
}
