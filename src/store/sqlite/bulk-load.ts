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

/**
 * meta key: the secondary indexes an import into an empty store dropped
 * (JSON: each index's name and SQL), present from the drop until they are
 * built again. The drop and the mark commit together, and so do the build and
 * the mark's removal: a store is never without indexes and without the mark.
 */
export const DEFERRED_INDEXES_KEY = "import_deferred_indexes";

/**
 * The tables whose secondary indexes an import into an empty store builds
 * once at the end (not the unique ones, which inserts' conflict rules need):
 * a b-tree insert per row and index (17 on memories, several on random ids)
 * is most of a large import's write cost. Meanwhile a memory deleted (by a
 * server) cascades through links without links_to: a scan, slower, correct.
 */
const DEFERRED_TABLES = ["memories", "memory_tags", "memory_primary_domain", "links"];

/**
 * While the mark is there, bulk addLinks leaves memories.link_count alone
 * (each link rewrote both memories' rows and their link-count index entries,
 * random pages all over the table): whoever clears the mark computes every
 * count from the links in the same transaction. Read inside the writer's
 * transaction, so a mark cleared by another process is seen at once.
 */
export function linkCountsDeferred(db: Database): boolean {
  return db.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?").get(DEFERRED_INDEXES_KEY) !== null;
}

/**
 * Drops the deferred tables' secondary indexes for an import, in one
 * transaction with the mark that names them, if the store holds no memory
 * (an import into a store with memories keeps its indexes: a server may be
 * searching it). True when the indexes are deferred (now or by an import
 * still running or killed: buildDeferredIndexes at its end, or the next
 * openStore, builds them).
 */
export function deferIndexes(db: Database): boolean {
  return db.transaction(() => {
    if (db.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?").get(DEFERRED_INDEXES_KEY)) return true;
    if (db.query("SELECT 1 FROM memories LIMIT 1").get()) return false;
    const saved = db
      .query<{ name: string; sql: string }, [string]>(
        `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%'
           AND tbl_name IN (SELECT value FROM json_each(?)) ORDER BY name`,
      )
      .all(JSON.stringify(DEFERRED_TABLES));
    db.run("INSERT INTO meta(key, value) VALUES (?, ?)", [DEFERRED_INDEXES_KEY, JSON.stringify(saved)]);
    for (const i of saved) db.run(`DROP INDEX ${i.name}`);
    return true;
  })();
}

/**
 * Builds the indexes an import deferred (those missing; one sort each),
 * computes every memory's link count from the links (see linkCountsDeferred)
 * and clears the mark, in one transaction. Nothing to do without the mark.
 * Runs when the import ends, however it ends, and at every openStore (before
 * the migrations, which expect the schema whole): an import killed between
 * batches leaves a store whose next open, or re-run, makes it whole.
 */
export function buildDeferredIndexes(db: Database): number {
  const hasMeta = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
  if (!hasMeta) return 0;
  return db.transaction(() => {
    const mark = db.query<{ value: string }, [string]>("SELECT value FROM meta WHERE key = ?").get(DEFERRED_INDEXES_KEY);
    if (!mark) return 0;
    const saved = JSON.parse(mark.value) as { name: string; sql: string }[];
    const present = new Set(
      db
        .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'index'")
        .all()
        .map((r) => r.name),
    );
    const missing = saved.filter((i) => !present.has(i.name));
    // links' first (the counts read links by to_id), then the counts, then memories' (the counts'
    // UPDATE would otherwise move rows' entries in the link-count indexes too).
    const onLinks = (i: { sql: string }) => /^CREATE INDEX \w+ ON links\b/i.test(i.sql);
    for (const i of missing.filter(onLinks)) db.run(i.sql);
    // The link-count trigger's rule: a link at either end, a link to itself once.
    db.run(
      `UPDATE memories SET link_count = c.n FROM (
         SELECT m.seq AS seq, (SELECT count(*) FROM links l WHERE l.from_id = m.id)
                            + (SELECT count(*) FROM links l WHERE l.to_id = m.id AND l.from_id <> m.id) AS n
           FROM memories m) AS c
       WHERE memories.seq = c.seq AND memories.link_count <> c.n`,
    );
    for (const i of missing.filter((i) => !onLinks(i))) db.run(i.sql);
    db.run("DELETE FROM meta WHERE key = ?", [DEFERRED_INDEXES_KEY]);
    return missing.length;
  })();
}
