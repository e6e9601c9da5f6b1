import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VectorIndex } from "../../../../../src/store/sqlite/vector/vector-index";
import { contentsOf, randomSeqs, vectorsOf } from "../../../../../src/store/sqlite/sample";
import { onPostgres } from "../../../../helpers/engine";
import { vec0StoreWith, vectorOf } from "../../../../helpers/vec0-store";

/** The samplers read SQLite's tables in slices (PostgreSQL samples inside the database, off this event loop). */
const sqliteOnly = (name: string, fn: () => void | Promise<void>) => test.skipIf(onPostgres)(`${name} [SQLite engine]`, fn);

const dir = mkdtempSync(join(tmpdir(), "memsvc-sample-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

sqliteOnly("random seqs from the table: distinct, live, within the cursor, about uniform, read in slices", async () => {
  const store = vec0StoreWith(dir, "big.db", 3000);
  const db = store.sqlite;
  db.run("DELETE FROM memories WHERE seq % 10 = 0");
  let pauses = 0;
  const pause = () => void pauses++;
  const seqs = await randomSeqs(db, 500, 2500, pause);
  expect(seqs).toHaveLength(500);
  expect(new Set(seqs).size).toBe(500);
  expect(seqs.every((s) => s <= 2500 && s % 10 !== 0)).toBe(true);
  expect(pauses).toBeGreaterThan(5);
  // Uniform over rows: each half of the range gets about half the picks (500 picks: 4 sd is ~45).
  const low = seqs.filter((s) => s <= 1250).length;
  expect(Math.abs(low - 250)).toBeLessThan(60);
  // Contents and vectors of the picked rows, also in slices.
  pauses = 0;
  const texts = await contentsOf(db, seqs.slice(0, 200), 6, pause);
  expect(texts).toHaveLength(200);
  expect(texts.every((t) => t.startsWith("note "))).toBe(true);
  expect(pauses).toBeGreaterThan(2);
  const vectors = await vectorsOf(db, [1, 2, 3], pause);
  expect(vectors.map((v) => v.seq)).toEqual([1, 2, 3]);
  expect(Array.from(vectors[1].vector)).toEqual(Array.from(vectorOf(1)));
  store.close();
});

sqliteOnly("a store of at most twice the sample is read whole and shuffled", async () => {
  const store = vec0StoreWith(dir, "small.db", 30);
  const seqs = await randomSeqs(store.sqlite, 20, Number.MAX_SAFE_INTEGER);
  expect(seqs).toHaveLength(20);
  expect(new Set(seqs).size).toBe(20);
  const all = await randomSeqs(store.sqlite, 50, Number.MAX_SAFE_INTEGER);
  expect([...all].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  store.close();
});

test("the index's sample: distinct live seqs within the cursor, all of them when few", () => {
  const index = new VectorIndex();
  for (let seq = 1; seq <= 2000; seq++) index.upsert(seq, vectorOf(seq), seq % 2 ? "a" : null);
  for (let seq = 1; seq <= 2000; seq += 7) index.remove(seq);
  const picked = index.sampleSeqs(300, 1500);
  expect(picked).toHaveLength(300);
  expect(new Set(picked).size).toBe(300);
  expect(picked.every((s) => s <= 1500 && (s - 1) % 7 !== 0 && index.has(s))).toBe(true);
  const few = new VectorIndex();
  for (let seq = 1; seq <= 5; seq++) few.upsert(seq, vectorOf(seq), null);
  few.remove(3);
  expect([...few.sampleSeqs(10)].sort()).toEqual([1, 2, 4, 5]);
  expect(few.sampleSeqs(0)).toEqual([]);
});
