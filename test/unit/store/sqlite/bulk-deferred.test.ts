import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importItems, type ImportItem } from "../../../../src/core/import";
import { ingestMemory } from "../../../../src/core/ingest";
import { buildDeferredIndexes, DEFERRED_INDEXES_KEY, deferIndexes } from "../../../../src/store/sqlite/bulk-load";
import { openStore, type Store } from "../../../../src/store/sqlite/open";
import { onPostgres } from "../../../helpers/engine";
import { makeServices } from "../../../helpers/services";

// An import into an empty SQLite store drops the secondary indexes and leaves link counts alone
// while it writes, and builds both once at the end (bulk-load.ts deferIndexes): crash-safe by a mark
// in meta that the next open acts on. The e2e test kills a real import between batches.
const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const indexes = (db: Store["sqlite"]) =>
  db.query<{ name: string; sql: string | null }, []>("SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name").all();
/** Secondary indexes (not unique) of the tables an import defers. */
const secondary = (db: Store["sqlite"]) =>
  db
    .query<{ n: number }, []>(
      `SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%'
         AND tbl_name IN ('memories', 'memory_tags', 'memory_primary_domain', 'links')`,
    )
    .get()!.n;
const mark = (db: Store["sqlite"]) => db.query("SELECT value FROM meta WHERE key = ?").get(DEFERRED_INDEXES_KEY);
/** Memories whose link_count is not what the link-count trigger would have made it (both ends; a link to itself once). */
const wrongCounts = (db: Store["sqlite"]) =>
  db
    .query<{ n: number }, []>(
      `SELECT count(*) AS n FROM memories m WHERE m.link_count <>
         (SELECT count(*) FROM links l WHERE l.from_id = m.id) + (SELECT count(*) FROM links l WHERE l.to_id = m.id AND l.from_id <> m.id)`,
    )
    .get()!.n;

function freshIndexes(): { name: string; sql: string | null }[] {
  const dir = mkdtempSync(join(tmpdir(), "memsvc-deferred-"));
  dirs.push(dir);
  const s = openStore(join(dir, "memsvc.db"));
  stores.push(s);
  return indexes(s.sqlite);
}

/** 700 items of made-up words (no two near-duplicates), each later one sharing half its words with one 280 before (a similarity link across batches), named links by key. */
function items(): ImportItem[] {
  const syllables = ["ka", "lo", "mi", "ter", "van", "sul", "dro", "pex", "qui", "bam", "zor", "fen", "gru", "hol"];
  let seed = 11;
  const rnd = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0), seed / 2 ** 32);
  const word = () => Array.from({ length: 3 }, () => syllables[Math.floor(rnd() * syllables.length)]).join("");
  const texts: string[][] = [];
  return Array.from({ length: 700 }, (_, i) => {
    const words = Array.from({ length: 12 }, word);
    if (i >= 300 && i % 4 === 0) words.splice(0, 7, ...texts[i - 280].slice(0, 7));
    texts.push(words);
    return {
      content: words.join(" "),
      memoryType: "knowledge",
      project: `p${i % 2}`,
      createdAt: Date.UTC(2025, 0, 1) + i,
      sourceAgent: "test-tool",
      provenance: `notes/${i}.md:1`,
      tags: [],
      keys: [`k${i}`],
      links: i % 3 === 0 && i > 0 ? [{ to: `k${i - 1}`, relationship: "relates_to" }] : [],
    };
  });
}

test.skipIf(onPostgres)(
  "an import into an empty store writes without secondary indexes and link counts, then builds them: the schema and every count as a row-by-row store has them [SQLite]",
  async () => {
    const s = makeServices();
    const db = s.store.sqlite;
    const during: { secondary: number; marked: boolean }[] = [];
    const tx = s.storage.transaction.bind(s.storage);
    (s.storage as { transaction: typeof tx }).transaction = (fn) =>
      tx((t) => {
        const seen = Object.create(t, {
          memories: {
            value: Object.create(t.memories, {
              insertMemories: {
                value: (rows: never) => {
                  during.push({ secondary: secondary(db), marked: mark(db) !== null });
                  return t.memories.insertMemories(rows);
                },
              },
            }),
          },
        });
        return fn(seen);
      });
    const out = await importItems(s, items());
    expect(out.added).toBe(700);
    expect(out.links).toBeGreaterThan(200);
    const all = freshIndexes();
    // Every batch wrote with the mark set and none of those tables' 18 secondary indexes (15 on memories).
    expect(during).toEqual(Array.from({ length: 3 }, () => ({ secondary: 0, marked: true })));
    expect(secondary(db)).toBe(18);
    // After: every index back, as a fresh store has them; no mark; link counts as the trigger keeps them.
    expect(indexes(db)).toEqual(all);
    expect(mark(db)).toBeNull();
    const related = db.query<{ n: number }, []>("SELECT count(*) AS n FROM links WHERE relationship = 'related'").get()!.n;
    expect(related).toBeGreaterThan(20);
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM memories WHERE link_count > 0").get()!.n).toBeGreaterThan(200);
    expect(wrongCounts(db)).toBe(0);
    expect(db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()!.integrity_check).toBe("ok");

    // Into a store with memories: the indexes stay, the counts are kept link by link.
    (s.storage as { transaction: typeof tx }).transaction = tx;
    const other = makeServices();
    await ingestMemory(other, { content: "Cart totals are rounded once, on the sum", project: "p0" });
    const mutable = other.storage as { transaction: typeof tx };
    const otherTx = other.storage.transaction.bind(other.storage);
    const seenOther: number[] = [];
    mutable.transaction = (fn) =>
      otherTx((t) => {
        seenOther.push(indexes(other.store.sqlite).length);
        return fn(t);
      });
    await importItems(other, items());
    expect(Math.min(...seenOther)).toBe(all.length);
    expect(wrongCounts(other.store.sqlite)).toBe(0);
    await s.close();
    await other.close();
  },
  60_000,
);

test.skipIf(onPostgres)("a store left with deferred indexes (an import killed) gets them, and its link counts, at the next open [SQLite]", () => {
  const dir = mkdtempSync(join(tmpdir(), "memsvc-deferred-"));
  dirs.push(dir);
  const file = join(dir, "memsvc.db");
  const all = freshIndexes();
  const first = openStore(file);
  expect(deferIndexes(first.sqlite)).toBe(true);
  expect(secondary(first.sqlite)).toBe(0);
  // Two memories and a link written meanwhile, its count left to the build (as bulk addLinks does).
  first.sqlite.run(
    `INSERT INTO memories(id, content, memory_type, created_at, updated_at, refreshed_at) VALUES
       ('a', 'one', 'knowledge', 1, 1, 1), ('b', 'two', 'knowledge', 1, 1, 1)`,
  );
  first.sqlite.run("INSERT INTO links(from_id, to_id, relationship, weight, created_at) VALUES ('a', 'b', 'related', 0.5, 1)");
  first.sqlite.run("UPDATE memories SET link_count = 0");
  expect(wrongCounts(first.sqlite)).toBe(2);
  // Not empty any more: a second import defers nothing new, but the mark stays until someone builds.
  expect(deferIndexes(first.sqlite)).toBe(true);
  first.close();
  const again = openStore(file);
  stores.push(again);
  expect(indexes(again.sqlite)).toEqual(all);
  expect(mark(again.sqlite)).toBeNull();
  expect(wrongCounts(again.sqlite)).toBe(0);
  // Nothing to do the second time; a store with memories and no mark is never deferred.
  expect(buildDeferredIndexes(again.sqlite)).toBe(0);
  expect(deferIndexes(again.sqlite)).toBe(false);
  expect(mark(again.sqlite)).toBeNull();
});
