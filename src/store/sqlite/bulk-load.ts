import type { Database } from "bun:sqlite";

/**
 * Bulk writes (an import's batch of memories, a batch of links) do once per
 * batch what some triggers do once per row: the triggers named here are
 * dropped for the batch and created again from their own SQL before it ends,
 * inside the caller's transaction, so a rollback or a crash leaves the schema
 * (and every row) as it was. Measured per imported memory in
 * docs/decisions/import-bulk-load.md.
 *
 * A trigger's DROP and CREATE change the schema cookie: other connections and
 * this one's cached statements prepare again once (a few statements a batch).
 */
export function withTriggersSuspended<T>(db: Database, names: readonly string[], fn: () => T): T {
  if (!db.inTransaction) throw new Error("withTriggersSuspended runs inside a transaction");
  const sqlOf = db.query<{ name: string; sql: string }, [string]>(
    "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN (SELECT value FROM json_each(?))",
  );
  const saved = sqlOf.all(JSON.stringify(names));
  if (saved.length !== names.length)
    throw new Error(`bulk load: triggers missing from the schema: ${names.filter((n) => !saved.some((s) => s.name === n)).join(", ")}`);
  for (const t of saved) db.run(`DROP TRIGGER ${t.name}`);
  const out = fn();
  for (const t of saved) db.run(t.sql);
  return out;
}

/** The per-row triggers insertMemories runs once per batch instead (its bulk path does their work). */
export const BULK_MEMORY_TRIGGERS = ["memories_fts_insert", "memory_tags_primary_insert", "row_counts_memories_insert"];

/** The per-row triggers addLinks runs once per batch instead. */
export const BULK_LINK_TRIGGERS = ["links_count_insert", "row_counts_links_insert"];

/**
 * A restore (`memsvc import <file.jsonl>` into an empty store) writes every row
 * with the triggers of both bulk paths suspended; this does their work once,
 * set-based, over the whole store before the transaction ends: the full text,
 * primary domains, each memory's link count (a link to itself counts once, as
 * links_count_insert's `id IN (from, to)`) and the row counts.
 */
export function fillAfterRestore(db: Database, inserted: { memories: number; links: number }): void {
  db.run("INSERT INTO memories_fts(rowid, content) SELECT seq, content FROM memories");
  db.run(
    `INSERT OR REPLACE INTO memory_primary_domain(memory_id, domain)
       SELECT memory_id, tag FROM (
         SELECT memory_id, tag, row_number() OVER (PARTITION BY memory_id ORDER BY weight DESC, tag) AS r FROM memory_tags
       ) WHERE r = 1`,
  );
  db.run(
    `UPDATE memories SET link_count = link_count
       + (SELECT count(*) FROM links l WHERE l.from_id = memories.id)
       + (SELECT count(*) FROM links l WHERE l.to_id = memories.id AND l.from_id != memories.id)`,
  );
  db.query("UPDATE row_counts SET n = n + ? WHERE name = 'memories'").run(inserted.memories);
  db.query("UPDATE row_counts SET n = n + ? WHERE name = 'links'").run(inserted.links);
}

/**
 * Runs `fn` (inside the caller's transaction) with the secondary indexes of
 * `tables` dropped (not the unique ones: inserts' conflict rules need those), and builds them again from their own SQL before it ends:
 * for a load into an empty store, one sort per index instead of a b-tree
 * insert per row and index. Transactional like the triggers' suspension.
 */
export function withIndexesSuspended<T>(db: Database, tables: readonly string[], fn: () => T): T {
  if (!db.inTransaction) throw new Error("withIndexesSuspended runs inside a transaction");
  const saved = db
    .query<{ name: string; sql: string }, [string]>(
      `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%'
         AND tbl_name IN (SELECT value FROM json_each(?))`,
    )
    .all(JSON.stringify(tables));
  for (const i of saved) db.run(`DROP INDEX ${i.name}`);
  const out = fn();
  for (const i of saved) db.run(i.sql);
  return out;
}
