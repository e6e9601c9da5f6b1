import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VectorIndex } from "../../../../../src/store/sqlite/vector/vector-index";
import { DIMENSIONS } from "../../../../../src/embed/types";
import { readIndexFileInto, saveIndexFile, saveIndexFileInBackground } from "../../../../../src/store/sqlite/vector/snapshot-file";
import { openStore, setMeta, type Store } from "../../../../../src/store/sqlite/open";
import { fromVec0, type IndexContext, type IndexState } from "../../../../../src/store/sqlite/vector/load";
import { decodeChunk, vec0Chunks, Vec0LayoutError } from "../../../../../src/store/sqlite/vector/vec0-chunks";
import { onPostgres } from "../../../../helpers/engine";
import { awkwardWrites, vec0StoreWith, vectorOf } from "../../../../helpers/vec0-store";

/** vec0's shadow tables and the in-memory index are the SQLite engine's alone: PostgreSQL searches with pgvector in the database. */
const sqliteOnly = (name: string, fn: () => void | Promise<void>) => test.skipIf(onPostgres)(`${name} [SQLite engine's vec0 storage]`, fn);

const dir = mkdtempSync(join(tmpdir(), "memsvc-vec0-chunks-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** `n` memories with vectors over three vec0 chunks (1024 each), projects cycling through a few and none. */
const storeWith = (n: number): Store => vec0StoreWith(dir, `s${files++}.db`, n);

function load(store: Store, via: "chunks" | "rows") {
  const index = new VectorIndex();
  const logs: string[] = [];
  const ctx: IndexContext = { store, index, embedderId: "test", log: (_level, message) => logs.push(message), write: async (fn) => fn() };
  const state: IndexState = { status: "loading", loaded: 0, total: 0, cursor: 0, dataVersion: 0, ready: Promise.resolve(), backgroundAbove: 0 };
  const step = fromVec0(ctx, state, via);
  while (step());
  return { snapshot: index.snapshot(), index, state, logs };
}

const bytes = (s: ReturnType<VectorIndex["snapshot"]>) =>
  [s.seqs, s.groups, s.scales, s.sums, s.codeSteps, s.rows, s.codes].map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength));

sqliteOnly("the chunk reader builds the very index the row scan builds, after deletes, moved vectors, project changes and a re-embed cursor", () => {
  const store = storeWith(2500);
  awkwardWrites(store);

  const rows = load(store, "rows");
  const chunks = load(store, "chunks");
  expect(chunks.index.size).toBe(2495);
  // The re-written vector sits in the last chunk now (the index keeps rows in project order, so its slot says nothing).
  expect(chunks.index.has(10)).toBe(true);
  expect(chunks.snapshot.groupNames).toEqual(rows.snapshot.groupNames);
  expect(bytes(chunks.snapshot)).toEqual(bytes(rows.snapshot));
  expect(chunks.state.loaded).toBe(rows.state.loaded);

  // Rows past a pending re-embed cursor stay out on both paths.
  setMeta(store, "reembed_cursor", "1800");
  const rowsBounded = load(store, "rows");
  const chunksBounded = load(store, "chunks");
  expect(chunksBounded.index.size).toBe(rowsBounded.index.size);
  expect(chunksBounded.index.has(1801)).toBe(false);
  expect(chunksBounded.index.has(10)).toBe(true);
  expect(bytes(chunksBounded.snapshot)).toEqual(bytes(rowsBounded.snapshot));
  store.close();
});

sqliteOnly("a chunk of an unexpected shape falls back to the row scan, which builds the whole index", () => {
  let store = storeWith(1500);
  const expected = bytes(load(store, "rows").snapshot);
  store.close();
  // The second chunk's rowids blob one slot short: not the layout the reader knows. Written without
  // sqlite-vec loaded (with it, its shadow tables are read-only).
  const raw = new Database(store.file);
  raw.run("UPDATE memory_vec_chunks SET rowids = substr(rowids, 1, length(rowids) - 8) WHERE chunk_id = (SELECT max(chunk_id) FROM memory_vec_chunks)");
  raw.close();
  store = openStore(store.file);
  const got = load(store, "chunks");
  expect(got.logs.some((m) => /vec0 chunk blobs of unexpected sizes.*row by row/.test(m))).toBe(true);
  expect(got.index.size).toBe(1500);
  expect(got.state.loaded).toBe(1500);
  expect(bytes(got.snapshot)).toEqual(expected);
  store.close();
});

sqliteOnly("a table without vec0's shadow tables gets no chunk reader", () => {
  const store = storeWith(3);
  store.sqlite.run("CREATE TABLE plain_vec(rowid INTEGER PRIMARY KEY, embedding BLOB)");
  expect(vec0Chunks(store.sqlite, "plain_vec")).toBeNull();
  expect(vec0Chunks(store.sqlite, "memory_vec")).not.toBeNull();
  store.close();
});

test("decodeChunk reads the validity bitmap low bit first and rejects rowids the index cannot hold", () => {
  const size = 16;
  const validity = new Uint8Array([0b1000_0101, 0b0000_0010]);
  const ids = new BigInt64Array(size);
  for (let i = 0; i < size; i++) ids[i] = BigInt(100 + i);
  const vectors = new Float32Array(size * DIMENSIONS);
  vectors[7 * DIMENSIONS] = 0.5;
  const chunk = decodeChunk(size, validity, new Uint8Array(ids.buffer), new Uint8Array(vectors.buffer));
  expect(chunk.seqs).toEqual([100, 102, 107, 109]);
  expect(chunk.slots).toEqual([0, 2, 7, 9]);
  expect(chunk.vectors[chunk.slots[2] * DIMENSIONS]).toBe(0.5);

  ids[2] = 1n << 40n;
  expect(() => decodeChunk(size, validity, new Uint8Array(ids.buffer), new Uint8Array(vectors.buffer))).toThrow(Vec0LayoutError);
  expect(() => decodeChunk(size, validity, new Uint8Array(8), new Uint8Array(vectors.buffer))).toThrow(Vec0LayoutError);
});

sqliteOnly("the index file written in the background is the one written at shutdown, and reads back", async () => {
  const store = storeWith(1200);
  const { index } = load(store, "chunks");
  const now = join(dir, "now.vindex");
  const later = join(dir, "later.vindex");
  saveIndexFile(now, index, "test-embedder", 7);
  await saveIndexFileInBackground(later, index.snapshot(), "test-embedder", 7);
  expect(Buffer.from(readFileSync(later))).toEqual(Buffer.from(readFileSync(now)));
  expect(existsSync(`${later}.tmp-bg`)).toBe(false);
  const back = new VectorIndex();
  const header = await readIndexFileInto(later, (h) => back.beginRestore(h.groupNames, h.count));
  back.finishRestore(0, header!.count);
  expect(header).toMatchObject({ embedder: "test-embedder", cursor: 7, count: 1200 });
  expect(bytes(back.snapshot())).toEqual(bytes(index.snapshot()));
  // A version 1 file (no prefilter codes) of the same rows is not read: the index is rebuilt, not misread.
  const old = join(dir, "old.vindex");
  const file = Buffer.from(readFileSync(now));
  file.write("memsvc-vindex-1\n", 0);
  writeFileSync(old, file);
  let asked = false;
  expect(await readIndexFileInto(old, () => ((asked = true), new VectorIndex().beginRestore([], 0)))).toBeNull();
  expect(asked).toBe(false);
  // Nor one of another projection.
  const head = file.toString("utf8", 20, 20 + file.readUInt32LE(16));
  expect(head).toContain(`"codes":"srht-`);
  file.write("memsvc-vindex-2\n", 0);
  file.write(head.replace(/"codes":"srht-/, '"codes":"xxxx-'), 20);
  writeFileSync(old, file);
  expect(await readIndexFileInto(old, () => ((asked = true), new VectorIndex().beginRestore([], 0)))).toBeNull();
  expect(asked).toBe(false);
  store.close();
});

sqliteOnly("writes between the chunk load's steps: a vector vec0 moves to a chunk created meanwhile is still loaded", () => {
  const store = storeWith(2048); // two full chunks: a re-written vector goes to a third
  const db = store.sqlite;
  const index = new VectorIndex();
  const ctx: IndexContext = { store, index, embedderId: "test", log: () => {}, write: async (fn) => fn() };
  const state: IndexState = { status: "loading", loaded: 0, total: 0, cursor: 0, dataVersion: 0, ready: Promise.resolve(), backgroundAbove: 0 };
  const step = fromVec0(ctx, state, "chunks");
  expect(step()).toBe(true);
  // vec0 has no upsert: a re-embed deletes and inserts, which logs no memory change.
  for (const seq of [2000, 3]) {
    db.run(`DELETE FROM memory_vec WHERE rowid = ${seq}`);
    db.query("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)").run(BigInt(seq), vectorOf(seq + 100_000));
  }
  while (step());
  const fresh = load(store, "chunks").index;
  expect(fresh.size).toBe(2048);
  expect(index.size).toBe(2048);
  const rowOf = (ix: VectorIndex, seq: number) => {
    const snap = ix.snapshot();
    const slot = snap.seqs.indexOf(seq);
    return { scale: snap.scales[slot], sum: snap.sums[slot], row: Array.from(snap.rows.subarray(slot * DIMENSIONS, (slot + 1) * DIMENSIONS)) };
  };
  for (const seq of [2000, 3, 1, 1024, 2048]) expect(rowOf(index, seq)).toEqual(rowOf(fresh, seq));
  store.close();
});
