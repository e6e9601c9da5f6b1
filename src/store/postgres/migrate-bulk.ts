/** `memsvc migrate` into PostgreSQL as a bulk load: indexes dropped for the copy, links counted once, the table compacted and the indexes built at the end. */
import type { PgHandle } from "./open";

/**
 * VACUUM (ANALYZE) of every table of the store, after a bulk copy. The copy
 * leaves the planner without statistics (plans guessed: /recent's project walk
 * took a bitmap scan and a sort over 3x the rows instead of its index) and
 * memories 2-3x bloated: each copied link's count trigger updates both its
 * memories, and every such update leaves a dead row version with entries in
 * every index, the full-text GIN included, which each search then reads and
 * discards. Measured at 20k memories (PGlite, bench/pg-explain.ts): a full-text
 * match read 12,259 index entries for 3,708 live rows over 4,870 heap pages
 * (2,646 after); database CPU per full-text query 104 -> 46 ms, per word count
 * 46 -> 13 ms, per /recent project walk 46 -> 13 ms; at 100k, 62,048 entries for
 * 18,371 rows and 24,210 heap pages (13,215 after), CPU 400 -> 196 ms and
 * 211 -> 52 ms; results identical. A real server's autovacuum would get
 * there some minutes later (PGlite has none). Outside any transaction (VACUUM
 * cannot run in one).
 */
export async function vacuumAnalyze(h: PgHandle): Promise<void> {
  const tables = (await h.sql.unsafe("SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", [h.schema])) as { tablename: string }[];
  if (tables.length === 0) return;
  await h.sql.unsafe(`VACUUM (ANALYZE) ${tables.map((t) => `${h.schema}."${t.tablename.replaceAll('"', '""')}"`).join(", ")}`);
}

/**
 * `memsvc migrate` is a bulk load: the store's secondary indexes (every index
 * but primary keys and unique ones, the HNSW graph and the full-text GIN
 * among them) go for the copy and are built once at its end. Maintaining
 * them row by row kept one backend at 100 % and the copy at 141 memories/s
 * (100k, a real PostgreSQL 15, HNSW inserts first of all); one build per
 * index is the usual bulk load. Their definitions are kept in the target's
 * meta (`migrate_indexes`) in the transaction that drops them, so a run
 * interrupted anywhere, resumed, still builds them, before the cursor says
 * complete. The copy goes into a schema no server uses yet (migrate refuses
 * one holding other memories), so no query runs without them meanwhile.
 */
const MIGRATE_INDEXES = "migrate_indexes";

export async function dropSecondaryIndexes(
  th: PgHandle,
  getMeta: (th: PgHandle, key: string) => Promise<string | null>,
  setMeta: (th: PgHandle, key: string, value: string) => Promise<unknown>,
): Promise<void> {
  if ((await getMeta(th, MIGRATE_INDEXES)) !== null) return;
  const rows = (await th.sql.unsafe(
    `SELECT i.relname AS name, pg_get_indexdef(x.indexrelid) AS def FROM pg_index x
       JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
      WHERE n.nspname = $1 AND NOT x.indisunique AND NOT x.indisprimary ORDER BY i.relname`,
    [th.schema],
  )) as { name: string; def: string }[];
  await setMeta(th, MIGRATE_INDEXES, JSON.stringify(rows.map((r) => r.def)));
  for (const r of rows) await th.sql.unsafe(`DROP INDEX ${th.schema}."${r.name.replaceAll('"', '""')}"`);
  // Link counts are counted once at the end (countLinks), not by the insert
  // trigger per batch: each batch's update wrote a new version of every
  // memory its links touch, which left the copied table twice its size.
  await th.sql.unsafe(`ALTER TABLE ${th.schema}.links DISABLE TRIGGER links_count_insert`);
}

/**
 * Sets every memory's link count from the links (the trigger was off for the
 * copy) and turns the trigger back on, in one transaction; idempotent, so a
 * run interrupted after it simply does it again.
 */
async function countLinks(h: PgHandle): Promise<void> {
  const s = h.schema;
  await h.sql.begin(async (tx) => {
    await tx.unsafe(
      `UPDATE ${s}.memories m SET link_count = c.n FROM (
         SELECT id, count(*)::int AS n FROM (SELECT from_id AS id FROM ${s}.links UNION ALL SELECT to_id FROM ${s}.links WHERE to_id <> from_id) e GROUP BY id) c
        WHERE m.id = c.id AND m.link_count <> c.n`,
    );
    await tx.unsafe(`ALTER TABLE ${s}.links ENABLE TRIGGER links_count_insert`);
  });
}

/**
 * Builds what dropSecondaryIndexes kept, each in its own statement (IF NOT
 * EXISTS: a resumed build skips the done ones), with maintenance_work_mem
 * large enough for the HNSW graph (pgvector builds it in memory, else far
 * slower) and the server's parallel maintenance workers; then forgets them.
 */
export async function rebuildIndexes(h: PgHandle, getMeta: (th: PgHandle, key: string) => Promise<string | null>): Promise<void> {
  if (h.inTransaction) return;
  const kept = await getMeta(h, MIGRATE_INDEXES);
  if (kept === null) return;
  await countLinks(h);
  const c = await h.sql.reserve();
  try {
    // The copy's dead versions (seq and id index entries included) go before the
    // indexes are built over the table: a compact heap is what every later scan reads.
    await c.unsafe(`VACUUM FULL ${h.schema}.memories`);
    await c.unsafe("SET maintenance_work_mem = '512MB'");
    for (const def of JSON.parse(kept) as string[]) await c.unsafe(def.replace(/^CREATE INDEX /, "CREATE INDEX IF NOT EXISTS "));
    await c.unsafe(`DELETE FROM ${h.schema}.meta WHERE key = $1`, [MIGRATE_INDEXES]);
  } finally {
    await c.unsafe("RESET maintenance_work_mem").catch(() => {});
    c.release();
  }
}
