import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VectorIndex } from "../../../../../src/store/sqlite/vector/vector-index";
import { DIMENSIONS } from "../../../../../src/embed/types";
import { indexFileOf, readIndexFileInto } from "../../../../../src/store/sqlite/vector/snapshot-file";
import { INDEX_SNAPSHOT_SLICE_ROWS } from "../../../../../src/store/sqlite/vector/tuning";
import { Database } from "bun:sqlite";
import { openStore, setMeta, type Store } from "../../../../../src/store/sqlite/open";
import { fromVec0, placedFromVec0, startIndex, syncIndex, type IndexContext, type IndexState } from "../../../../../src/store/sqlite/vector/load";
import { onPostgres } from "../../../../helpers/engine";
import { awkwardWrites, vec0StoreWith, vectorOf } from "../../../../helpers/vec0-store";

/** The in-memory index and vec0 are the SQLite engine's alone. */
const sqliteOnly = (name: string, fn: () => void | Promise<void>) => test.skipIf(onPostgres)(`${name} [SQLite engine's vector index]`, fn);

const dir = mkdtempSync(join(tmpdir(), "memsvc-placed-load-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const storeWith = (n: number): Store => vec0StoreWith(dir, `s${files++}.db`, n);

const newState = (): IndexState => ({ status: "loading", loaded: 0, total: 0, cursor: 0, dataVersion: 0, ready: Promise.resolve(), backgroundAbove: 0 });
const contextOf = (store: Store, index = new VectorIndex()): IndexContext => ({ store, index, embedderId: "test", log: () => {}, write: async (fn) => fn() });

/** Every live row by seq: its project, int8 row, scale, sum and prefilter code, wherever its slot is. */
function rowsBySeq(index: VectorIndex) {
  const snap = index.snapshot();
  const out = new Map<number, string>();
  for (let slot = 0; slot < snap.seqs.length; slot++) {
    if (snap.seqs[slot] === 0) continue;
    const row = Array.from(snap.rows.subarray(slot * DIMENSIONS, (slot + 1) * DIMENSIONS));
    out.set(snap.seqs[slot], JSON.stringify([snap.groupNames[snap.groups[slot]], snap.scales[slot], snap.sums[slot], snap.codeSteps[slot], row]));
  }
  return out;
}

/** Each group's rows form one run and nothing is left for cluster() or compaction to do. */
function inGroupOrder(index: VectorIndex): boolean {
  const ix = index as unknown as { clusteredUpTo: number; used: number; dead: number; inGroupOrder(): boolean };
  return ix.clusteredUpTo === ix.used && ix.dead === 0 && ix.inGroupOrder();
}

/** The placed load, run to its end as the server runs it: steps, then the change log replayed. */
function placedLoad(store: Store, between: (step: number) => void = () => {}) {
  const ctx = contextOf(store);
  // As startIndex runs it: searches find nothing and written rows wait for their codes meanwhile.
  ctx.index.loading = true;
  const state = newState();
  state.cursor = store.sqlite.query<{ n: number | null }, []>("SELECT max(id) AS n FROM vector_changes").get()!.n ?? 0;
  const step = placedFromVec0(ctx, state)!;
  let steps = 0;
  while (step()) between(++steps);
  ctx.index.loading = false;
  state.status = "ready";
  state.dataVersion = -1;
  syncIndex(ctx, state);
  return { index: ctx.index, state, steps };
}

function rowScan(store: Store): VectorIndex {
  const ctx = contextOf(store);
  const step = fromVec0(ctx, newState(), "rows");
  while (step());
  return ctx.index;
}

sqliteOnly("the placed load builds the row scan's index already in group order, after deletes, moved vectors, project changes and a re-embed cursor", () => {
  const store = storeWith(2500);
  awkwardWrites(store);

  const placed = placedLoad(store);
  expect(placed.index.size).toBe(2495);
  expect(placed.state.loaded).toBe(2495);
  expect(inGroupOrder(placed.index)).toBe(true);
  expect(rowsBySeq(placed.index)).toEqual(rowsBySeq(rowScan(store)));
  // Several steps, none of them the whole load.
  expect(placed.steps).toBeGreaterThan(5);

  setMeta(store, "reembed_cursor", "1800");
  const bounded = placedLoad(store);
  expect(bounded.index.has(1801)).toBe(false);
  expect(bounded.index.has(10)).toBe(true);
  expect(rowsBySeq(bounded.index)).toEqual(rowsBySeq(rowScan(store)));
  store.close();
});

sqliteOnly("writes between the placed load's steps (new rows, deletes, a project move, a re-written vector) all hold once it replays the change log", () => {
  const store = storeWith(3000);
  const db = store.sqlite;
  const addMemory = (i: number, project: string | null) => {
    const { lastInsertRowid } = db
      .query("INSERT INTO memories(id, content, memory_type, project, created_at, updated_at, refreshed_at) VALUES (?, ?, 'knowledge', ?, 1, 1, 1)")
      .run(`new${i}`, `new ${i}`, project);
    db.query("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)").run(BigInt(lastInsertRowid), vectorOf(50_000 + i));
    return Number(lastInsertRowid);
  };
  // Writes in every phase: the order read, the vectors, the seq map, the codes.
  const steps = placedLoad(store).steps;
  expect(steps).toBeGreaterThan(10);
  const seen: number[] = [];
  const { index } = placedLoad(store, (step) => {
    if (step === 1) seen.push(addMemory(1, "p1"));
    if (step === 3) db.run("DELETE FROM memories WHERE seq = 7");
    if (step === Math.floor(steps / 2)) db.run("UPDATE memories SET project = 'moved' WHERE seq = 2999");
    if (step === steps - 4) {
      // A re-embed of one vector: vec0 moves it to its newest chunk, read after the old one.
      db.run("DELETE FROM memory_vec WHERE rowid = 3");
      db.query("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)").run(3n, vectorOf(77_777));
    }
    if (step === steps - 2) seen.push(addMemory(2, null));
  });
  expect(index.size).toBe(3000 - 1 + 2);
  for (const seq of seen) expect(index.has(seq)).toBe(true);
  expect(index.has(7)).toBe(false);
  expect(rowsBySeq(index)).toEqual(rowsBySeq(rowScan(store)));
  store.close();
});

sqliteOnly("a chunk of an unexpected shape mid-way: the placed load falls back to the row scan and still builds the whole, coded index", () => {
  let store = storeWith(1500);
  const expected = rowsBySeq(rowScan(store));
  store.close();
  // Written without sqlite-vec loaded (with it, its shadow tables are read-only).
  const raw = new Database(store.file);
  raw.run("UPDATE memory_vec_chunks SET rowids = substr(rowids, 1, length(rowids) - 8) WHERE chunk_id = (SELECT max(chunk_id) FROM memory_vec_chunks)");
  raw.close();
  store = openStore(store.file);
  const { index, state } = placedLoad(store);
  expect(index.size).toBe(1500);
  expect(state.loaded).toBe(1500);
  // Every row coded by the end of the load (a row without its code is scored exactly until coded).
  expect((index as unknown as { codesComplete: boolean }).codesComplete).toBe(true);
  expect(rowsBySeq(index)).toEqual(expected);
  store.close();
});

sqliteOnly("an ingest's upsert during a begun restore waits for the replay instead of taking a slot the restore owns", () => {
  const index = new VectorIndex();
  const into = index.beginRestore(["", "p"], 3);
  into.seqs.set([1, 2, 3]);
  into.groups.set([0, 1, 1]);
  for (let slot = 0; slot < 3; slot++) index.placeRow(slot, vectorOf(slot + 1));
  index.finishRestore(0, 1);
  // Seq 9 is new: the slots past `used` belong to the restore.
  index.upsert(9, vectorOf(9), "p");
  expect(index.has(9)).toBe(false);
  // Seq 1 is live already: an update in place is fine.
  index.upsert(1, vectorOf(100), "");
  index.finishRestore(1, 3);
  expect([1, 2, 3].every((seq) => index.has(seq))).toBe(true);
  expect(index.size).toBe(3);
  index.upsert(9, vectorOf(9), "p");
  expect(index.size).toBe(4);
});

sqliteOnly("a first start's index file is written at a lull in requests, not the moment the index is ready", async () => {
  const store = storeWith(1500);
  let release!: () => void;
  const lull = new Promise<void>((r) => (release = r));
  let asked = 0;
  const ctx: IndexContext = { ...contextOf(store), quiet: () => (asked++, lull) };
  const state = startIndex(ctx, 1000);
  await state.ready;
  expect(inGroupOrder(ctx.index)).toBe(true);
  for (let i = 0; i < 20 && asked === 0; i++) await Bun.sleep(5);
  expect(asked).toBe(1);
  await Bun.sleep(20);
  expect(existsSync(indexFileOf(store.file))).toBe(false);
  release();
  for (let i = 0; i < 100 && !existsSync(indexFileOf(store.file)); i++) await Bun.sleep(10);
  await state.saving;
  expect(existsSync(indexFileOf(store.file))).toBe(true);
  state.stop = true;
  store.close();
});

sqliteOnly("the save after a load copies the index between requests, and copies again when a write came between two slices", async () => {
  // More rows than one slice of the copy (INDEX_SNAPSHOT_SLICE_ROWS), so it pauses.
  const store = storeWith(INDEX_SNAPSHOT_SLICE_ROWS + 1500);
  const ctx: IndexContext = { ...contextOf(store), quiet: () => Promise.resolve() };
  const copies: (boolean | null)[] = [];
  const sliced = ctx.index.snapshotInSlices.bind(ctx.index);
  let wrote = false;
  ctx.index.snapshotInSlices = async (rows, pause, wanted) => {
    const snap = await sliced(
      rows,
      async () => {
        await pause();
        // A write lands between the first copy's first two slices.
        if (!wrote) {
          wrote = true;
          ctx.index.upsert(999_999, vectorOf(999_999), "late");
        }
      },
      wanted,
    );
    copies.push(snap !== null);
    return snap;
  };
  const state = startIndex(ctx, 1000);
  await state.ready;
  for (let i = 0; i < 200 && !existsSync(indexFileOf(store.file)); i++) await Bun.sleep(10);
  await state.saving;
  expect(copies).toEqual([false, true]);
  const back = new VectorIndex();
  const header = await readIndexFileInto(indexFileOf(store.file), (h) => back.beginRestore(h.groupNames, h.count));
  back.finishRestore(0, header!.count);
  expect(back.has(999_999)).toBe(true);
  expect(rowsBySeq(back)).toEqual(rowsBySeq(ctx.index));
  state.stop = true;
  store.close();
});
