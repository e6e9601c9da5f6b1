/**
 * What each part of an imported memory's SQLite write costs (issue 40): into a
 * fresh store (the real migrations, openStore's pragmas) writes N memories
 * the way the import does (row, vec0 vector, two tags, one similarity link to
 * an earlier memory) in transactions of --batch rows, once per variant, each
 * variant leaving one part out or changing one setting. Prints JSON: CPU ms
 * per memory per variant (process CPU time; the machine is shared).
 *
 *   bun bench/import-sql.ts [--rows 20000] [--batch 256] [--only name,name]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openStore } from "../src/store/sqlite/open";
import { NoteGenerator, prng } from "./lib/corpus";

const { values: args } = parseArgs({ options: { rows: { type: "string" }, batch: { type: "string" }, only: { type: "string" } } });
const ROWS = Number(args.rows ?? 20_000);
const BATCH = Number(args.batch ?? 256);
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Variant {
  batch?: number;
  fts?: boolean;
  vec?: boolean;
  tags?: boolean;
  links?: boolean;
  /** Write FTS rows with one INSERT ... SELECT per batch (the insert trigger dropped and put back in the same transaction). */
  ftsPerBatch?: boolean;
  cacheKib?: number;
  /** Memories and tags as one INSERT ... SELECT FROM json_each a batch (seqs follow in order), vectors still row by row. */
  multiRow?: boolean;
  /** Row-by-row statements, but each table's rows of the batch together (memories, then vectors, then tags). */
  grouped?: boolean;
  /** Drop memories' secondary indexes (not kept: only shows their share). */
  noIndexes?: boolean;
}
const VARIANTS: Record<string, Variant> = {
  as_is: {},
  batch_4096: { batch: 4096 },
  no_fts: { fts: false },
  fts_per_batch: { ftsPerBatch: true },
  no_vec: { vec: false },
  no_tags: { tags: false },
  no_links: { links: false },
  no_memory_indexes: { noIndexes: true },
  cache_64mb: { cacheKib: 65536 },
  cache_64mb_batch_4096: { cacheKib: 65536, batch: 4096 },
  multi_row: { multiRow: true },
  grouped: { grouped: true },
};

const gen = new NoteGenerator(40);
const rand = prng(7);
const contents = Array.from({ length: ROWS }, () => gen.note());
const vectors = contents.map(() => {
  const v = new Float32Array(384);
  let n = 0;
  for (let i = 0; i < 384; i++) n += (v[i] = rand() - 0.5) ** 2;
  for (let i = 0; i < 384; i++) v[i] /= Math.sqrt(n);
  return v;
});

function run(name: string, v: Variant): Record<string, unknown> {
  const dir = mkdtempSync(join(tmpdir(), "memsvc-import-sql-"));
  const store = openStore(join(dir, "memsvc.db"));
  const db = store.sqlite;
  try {
    if (v.cacheKib) db.run(`PRAGMA cache_size = -${v.cacheKib}`);
    if (v.fts === false) db.run("DROP TRIGGER memories_fts_insert");
    if (v.noIndexes) {
      for (const { name: ix } of db
        .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'memories' AND sql IS NOT NULL")
        .all())
        db.run(`DROP INDEX ${ix}`);
    }
    const trigger = db.query<{ sql: string }, []>("SELECT sql FROM sqlite_master WHERE name = 'memories_fts_insert'").get()?.sql;
    const insert = db.query<{ seq: number }, any[]>(
      `INSERT INTO memories(id, content, memory_type, project, source_agent, source_agent_id, source_domain, source_session, privacy, created_at, updated_at, refreshed_at, strength)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
    );
    const insertVec = db.query("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)");
    const insertTag = db.query("INSERT INTO memory_tags(memory_id, tag, weight) VALUES (?, ?, ?)");
    const insertLink = db.query(
      `INSERT INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(from_id, to_id, relationship) DO UPDATE SET weight = max(weight, excluded.weight)`,
    );
    const ids: string[] = [];
    const batch = v.batch ?? BATCH;
    const t0 = cpuNow();
    const w0 = performance.now();
    for (let start = 0; start < ROWS; start += batch) {
      db.run("BEGIN IMMEDIATE");
      if (v.ftsPerBatch) db.run("DROP TRIGGER memories_fts_insert");
      let first = -1;
      let last = -1;
      if (v.grouped) {
        const end = Math.min(ROWS, start + batch);
        const now = Date.now();
        const seqs: number[] = [];
        for (let i = start; i < end; i++) {
          const n = contents[i];
          const id = crypto.randomUUID();
          ids.push(id);
          seqs.push(insert.get(id, n.content, n.memoryType, n.project, "markdown", null, null, `note ${i}.md`, "WORK", now, now, now, 1)!.seq);
        }
        if (v.vec !== false) for (let i = start; i < end; i++) insertVec.run(BigInt(seqs[i - start]), vectors[i]);
        for (let i = start; i < end; i++) {
          insertTag.run(ids[i], contents[i].project, 1);
          insertTag.run(ids[i], contents[i].memoryType, 0.5);
        }
        for (let i = start; i < end; i++) if (v.links !== false && i > 0) insertLink.run(ids[i], ids[Math.floor(rand() * i)], "related", 0.8, now);
        db.run("COMMIT");
        continue;
      }
      if (v.multiRow) {
        const end = Math.min(ROWS, start + batch);
        const rows = [];
        const tags = [];
        const now = Date.now();
        for (let i = start; i < end; i++) {
          const n = contents[i];
          const id = crypto.randomUUID();
          rows.push([id, n.content, n.memoryType, n.project, `note ${i}.md`, now]);
          tags.push([id, n.project, 1], [id, n.memoryType, 0.5]);
          ids.push(id);
        }
        const before = db.query<{ s: number | null }, []>("SELECT max(seq) AS s FROM memories").get()!.s ?? 0;
        db.query(
          `INSERT INTO memories(id, content, memory_type, project, source_agent, source_session, privacy, created_at, updated_at, refreshed_at, strength)
           SELECT value->>0, value->>1, value->>2, value->>3, 'markdown', value->>4, 'WORK', value->>5, value->>5, value->>5, 1 FROM json_each(?) ORDER BY key`,
        ).run(JSON.stringify(rows));
        for (let i = start; i < end; i++) if (v.vec !== false) insertVec.run(BigInt(before + 1 + i - start), vectors[i]);
        db.query("INSERT INTO memory_tags(memory_id, tag, weight) SELECT value->>0, value->>1, value->>2 FROM json_each(?)").run(JSON.stringify(tags));
        for (let i = start; i < end; i++) if (v.links !== false && i > 0) insertLink.run(ids[i], ids[Math.floor(rand() * i)], "related", 0.8, now);
        db.run("COMMIT");
        continue;
      }
      for (let i = start; i < Math.min(ROWS, start + batch); i++) {
        const n = contents[i];
        const id = crypto.randomUUID();
        const now = Date.now();
        const { seq } = insert.get(id, n.content, n.memoryType, n.project, "markdown", null, null, `note ${i}.md`, "WORK", now, now, now, 1)!;
        if (first < 0) first = seq;
        last = seq;
        if (v.vec !== false) insertVec.run(BigInt(seq), vectors[i]);
        if (v.tags !== false) {
          insertTag.run(id, n.project, 1);
          insertTag.run(id, n.memoryType, 0.5);
        }
        if (v.links !== false && ids.length) insertLink.run(id, ids[Math.floor(rand() * ids.length)], "related", 0.8, now);
        ids.push(id);
      }
      if (v.ftsPerBatch) {
        db.query("INSERT INTO memories_fts(rowid, content) SELECT seq, content FROM memories WHERE seq BETWEEN ? AND ?").run(first, last);
        db.run(trigger!);
      }
      db.run("COMMIT");
    }
    const cpu = cpuNow() - t0;
    return {
      variant: name,
      ...v,
      batch,
      cpu_ms_per_row: Math.round((cpu / ROWS) * 1000) / 1000,
      wall_ms_per_row: Math.round(((performance.now() - w0) / ROWS) * 1000) / 1000,
    };
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const only = args.only?.split(",");
const load = loadavg()[0];
const results = Object.entries(VARIANTS)
  .filter(([name]) => !only || only.includes(name))
  .map(([name, v]) => run(name, v));
console.log(JSON.stringify({ bench: "import-sql", rows: ROWS, load_avg_1m_before: Math.round(load * 100) / 100, results }, null, 2));
