import { getMeta, setMeta, transact, type Store } from "../open";
import { indexFileOf, readIndexFileInto, saveIndexFile, saveIndexFileInBackground } from "./snapshot-file";
import type { IndexState as CoreIndexState } from "../../../core/search/store";
import type { Logger } from "../../../core/log";
import {
  INDEX_BACKGROUND_ABOVE,
  INDEX_CODE_SLICE,
  INDEX_LOAD_CHUNK,
  INDEX_ORDER_SLICE,
  INDEX_RESTORE_SLICE,
  INDEX_SNAPSHOT_ATTEMPTS,
  INDEX_SNAPSHOT_SLICE_ROWS,
  VECTOR_CHANGES_KEEP,
} from "./tuning";
import type { VectorIndex } from "./vector-index";
import { DIMENSIONS } from "../../../embed/types";
import { vec0Chunks, Vec0LayoutError, type Vec0Chunk } from "./vec0-chunks";
import { MEMORY_COUNT_SQL } from "../row-counts";
import { fillCodes, fillFloats } from "./fill";

/**
 * The SQLite engine's vector search: the exact int8 index in this process's
 * memory (vector-index.ts, pure computation over its kernels) kept in step
 * with the database here. This half is SQLite's own:
 * vec0 is the durable truth it loads from, the vector_changes log (filled by
 * triggers) and PRAGMA data_version tell it what other processes wrote, and
 * the index file next to the database file makes restarts fast. PostgreSQL
 * needs none of it (pgvector searches inside the database).
 */

/** Where the in-memory index stands against the database. */
export interface IndexState extends CoreIndexState {
  /** Last vector_changes row applied. */
  cursor: number;
  /** PRAGMA data_version at the last check: it moves only when another connection commits. */
  dataVersion: number;
  /** Stores with more vectors load in the background and keep an index file. */
  backgroundAbove: number;
  /** A save writing with the event loop free; shutdown waits for it. */
  saving?: Promise<void>;
}

/** What the index's upkeep works with (one per connection and active embedder). */
export interface IndexContext {
  store: Store;
  index: VectorIndex;
  embedderId: string;
  log: Logger;
  /** The handle's write lock (write-lock.ts): housekeeping deletes queue behind other writes. */
  write: <T>(fn: () => T) => Promise<T>;
  /** Resolves at a lull in requests (core/slices.ts lull); absent: at once. */
  quiet?: () => Promise<unknown>;
}

type VecRow = { seq: number; embedding: Uint8Array | null; project: string | null };

const asVector = (b: Uint8Array) => new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);

/** Where a chunk's slice from `at` ends: a chunk (1024 vectors) in even slices of at most INDEX_LOAD_CHUNK, each step holding the event loop a few ms. */
const sliceEnd = (length: number, at: number) => Math.min(length, at + Math.ceil(length / Math.ceil(length / INDEX_LOAD_CHUNK)));

/** Rows past a pending re-embed cursor are of the old vector space: BM25 finds them until it passes. */
function reembedLimit(s: IndexContext): number {
  const cursor = getMeta(s.store, "reembed_cursor");
  return cursor === null ? Number.MAX_SAFE_INTEGER : Number(cursor);
}

const maxChange = (s: IndexContext) => s.store.sqlite.query<{ n: number | null }, []>("SELECT max(id) AS n FROM vector_changes").get()!.n ?? 0;
const dataVersion = (s: IndexContext) => s.store.sqlite.query<{ data_version: number }, []>("PRAGMA data_version").get()!.data_version;

/**
 * Fills the index from vec0. Small stores load before this returns; large
 * ones load in chunks between requests, so the server listens at once and
 * answers searches BM25-only (health says `index: loading`) until done.
 */
export function startIndex(s: IndexContext, backgroundAbove = INDEX_BACKGROUND_ABOVE): IndexState {
  let resolve!: () => void;
  const ready = new Promise<void>((r) => (resolve = r));
  const state: IndexState = { status: "loading", loaded: 0, total: 0, cursor: 0, dataVersion: dataVersion(s), ready, backgroundAbove };
  const finish = () => {
    s.index.loading = false;
    state.status = "ready";
    resolve();
  };
  // A row restored from the index file has no float vector until fillFloats reaches it: the search reads one it needs here.
  const readVector = s.store.sqlite.query<{ embedding: Uint8Array }, [number]>("SELECT embedding FROM memory_vec WHERE rowid = ?");
  s.index.vectorSource = (seq) => {
    const row = readVector.get(seq);
    return row ? asVector(row.embedding).slice() : null;
  };
  const stored = claimVectorSpace(s, backgroundAbove + 1);
  if (stored === null) {
    // A different vector space: the re-embed job fills the index as it goes.
    state.cursor = maxChange(s);
    finish();
    return state;
  }
  if (stored <= backgroundAbove) {
    state.cursor = maxChange(s);
    const load = fromVec0(s, state);
    while (load());
    finish();
    return state;
  }
  // Large stores: after the server listens, from the saved file if it is usable, else from vec0.
  s.index.loading = true;
  s.log("info", `loading the vector index (over ${backgroundAbove} vectors) in the background; search is BM25-only until done`);
  const started = performance.now();
  const fromVec0Steps = () => {
    state.cursor = maxChange(s);
    pruneChanges(s, state.cursor);
    const placed = placedFromVec0(s, state);
    const load = placed ?? fromVec0(s, state);
    const step = () => {
      try {
        if (state.stop) return finish();
        const more = load();
        // Each step codes the rows it loaded (encode-kernel.ts, ~1 us a row: ~0.1 s at 100k), so the index
        // is ready with every prefilter code and the first searches neither score uncoded rows exactly
        // nor share the event loop with a fill. The placed load codes in steps of its own.
        if (!placed) s.index.fillCodes(Infinity);
        if (more) {
          setImmediate(step);
          return;
        }
        if (placed) {
          // Writes during a placed load that found their row not yet live were left to the change log.
          state.dataVersion = -1;
          syncIndex(s, state);
        }
        s.log("info", `vector index ready: ${s.index.size} vectors in ${Math.round(performance.now() - started)} ms`);
        finish();
        // Saved once every row has its prefilter code (rows replayed at the end may still lack one),
        // so the next start reads one file even if this process is killed; written off the event loop.
        // The snapshot it writes is a copy of the index (~50 ms at 100k, in one go): at a lull, not
        // in the moment the first searches arrive.
        fillCodes(s, state, () => void (s.quiet?.() ?? Promise.resolve()).then(() => saveIndex(s, state, true)));
      } catch (e) {
        stopped(e);
      }
    };
    step();
  };
  // A closed database (shutdown mid-load) ends the load; searches stay BM25-only.
  const stopped = (e: unknown) => {
    s.log("warn", `vector index load stopped: ${(e as Error).message}`);
    finish();
  };
  const loadInBackground = () =>
    fromIndexFile(s, state)
      .then((done) => {
        if (state.stop) return finish();
        if (!done) return fromVec0Steps();
        pruneChanges(s, state.cursor);
        s.log("info", `vector index ready from its file: ${s.index.size} vectors in ${Math.round(performance.now() - started)} ms`);
        finish();
        // Changes replayed past the file were added while loading: they get their codes now. The
        // file's rows get their float vectors from vec0 (the file keeps int8 rows only).
        fillCodes(s, state, () => {});
        fillFloats(s, state);
      })
      .catch(stopped);
  // The first step waits a turn of the event loop: the server listens and answers before any of this runs.
  // The SIMD kernels compile in a turn of their own (~10 ms CPU in a fresh process), not inside a load step.
  setImmediate(() => {
    try {
      s.index.prepareKernels();
    } catch (e) {
      return stopped(e);
    }
    setImmediate(loadInBackground);
  });
  return state;
}

/**
 * Loads the index from vec0, consumed one step per call (false when done):
 * from vec0's chunk blobs (vec0-chunks.ts, one query per 1024 vectors) when
 * its storage layout is the expected one, else one streamed scan of its rows.
 * Both visit the vectors in the same order, so they build the same index.
 * Rows written meanwhile are in the change log past state.cursor and replayed.
 */
export function fromVec0(s: IndexContext, state: IndexState, via: "chunks" | "rows" = "chunks"): () => boolean {
  const upTo = reembedLimit(s);
  const chunked = via === "chunks" ? vec0Chunks(s.store.sqlite, "memory_vec") : null;
  if (!chunked) return fromVec0Rows(s, state, upTo);
  state.total = chunked.count(upTo);
  const chunks = chunked.chunks();
  const projects = s.store.sqlite.query<{ seq: number; project: string | null }, [string]>(
    "SELECT seq, project FROM memories WHERE seq IN (SELECT value FROM json_each(?))",
  );
  let rows: (() => boolean) | null = null;
  let chunk: Vec0Chunk | null = null;
  let at = 0;
  return () => {
    if (rows) return rows();
    if (!chunk || at === chunk.seqs.length) {
      let next: IteratorResult<Vec0Chunk>;
      try {
        next = chunks.next();
      } catch (e) {
        rows = rowScanInstead(s, state, upTo, e);
        return true;
      }
      if (next.done) return false;
      chunk = next.value;
      at = 0;
    }
    const { seqs, slots, vectors } = chunk;
    const end = sliceEnd(seqs.length, at);
    const slice = seqs.slice(at, end);
    const projectOf = new Map(projects.all(JSON.stringify(slice)).map((r) => [r.seq, r.project]));
    for (; at < end; at++) {
      const seq = seqs[at];
      const project = projectOf.get(seq);
      // As the row scan's join and rowid bound: vectors without a memory, or past a re-embed cursor, are left out.
      if (project === undefined || seq > upTo) continue;
      const from = slots[at] * DIMENSIONS;
      s.index.upsert(seq, vectors.subarray(from, from + DIMENSIONS), project);
      state.loaded++;
    }
    return true;
  };
}

/**
 * Loads the index from vec0's chunks with every row placed where its group's
 * run has it (groups in project order, rows in seq order within), so the
 * index is in group order when ready and nothing reorders it then: cluster()
 * after a load in seq order held the event loop ~110 ms at 100k (~150 ms
 * with the index file's snapshot right after), exactly when the first
 * searches arrive. Consumed one step per call (false when done), each a few
 * ms: the order, read from the (project, seq) index in slices
 * (INDEX_ORDER_SLICE); the vectors, chunk by chunk (INDEX_LOAD_CHUNK); the
 * seq -> slot map (INDEX_RESTORE_SLICE); the prefilter codes
 * (INDEX_CODE_SLICE). null when vec0's layout is not the one read here.
 * Rows written meanwhile are in the change log past state.cursor: the caller
 * replays it (a placed load leaves new rows to it), as after the index file.
 */
export function placedFromVec0(s: IndexContext, state: IndexState): (() => boolean) | null {
  const chunked = vec0Chunks(s.store.sqlite, "memory_vec");
  if (!chunked) return null;
  const db = s.store.sqlite;
  const upTo = reembedLimit(s);
  state.total = chunked.count(upTo);
  const nextProject = db.query<{ p: string | null }, [string]>("SELECT min(project) AS p FROM memories WHERE project > ?");
  const seqsOf = db.query<{ seq: number }, [string | null, number, number, number]>(
    "SELECT seq FROM memories WHERE project IS ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
  );
  // The order: group names (null is the index's "") and every seq, group after group.
  const names: string[] = [];
  const order: number[] = [];
  const groupOf: number[] = [];
  let project: string | null | undefined = null;
  let after = 0;
  let into: ReturnType<VectorIndex["beginRestore"]> | null = null;
  let slotOf: (seq: number) => number = () => -1;
  let placed: Uint8Array | null = null;
  let chunks: Generator<Vec0Chunk> | null = null;
  let chunk: Vec0Chunk | null = null;
  let at = 0;
  let chunksDone = false;
  let finished = 0;
  let rows: (() => boolean) | null = null;

  const readOrder = (group: string | null): void => {
    if (after === 0) names.push(group ?? "");
    const got = seqsOf.all(group, after, upTo, INDEX_ORDER_SLICE);
    for (const r of got) {
      order.push(r.seq);
      groupOf.push(names.length - 1);
    }
    if (got.length === INDEX_ORDER_SLICE) {
      after = got[got.length - 1].seq;
      return;
    }
    after = 0;
    project =
      group === null
        ? (db.query<{ p: string | null }, []>("SELECT min(project) AS p FROM memories").get()?.p ?? undefined)
        : (nextProject.get(group)?.p ?? undefined);
  };

  const begin = (): void => {
    const n = order.length;
    const to = (into = s.index.beginRestore(names, n));
    let maxSeq = 0;
    for (const seq of order) if (seq > maxSeq) maxSeq = seq;
    // Dense seqs (the usual store) map through an array; a store that lost most of its rows, through a Map.
    const dense = maxSeq < 8 * n + 1024 ? new Int32Array(maxSeq + 1).fill(-1) : null;
    const sparse = dense ? null : new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const seq = order[i];
      // A row moved to another project while the order was read can be listed twice: its first slot is kept.
      const seen = dense ? dense[seq] : (sparse!.get(seq) ?? -1);
      to.seqs[i] = seen === -1 ? seq : 0;
      to.groups[i] = groupOf[i];
      if (seen === -1) dense ? (dense[seq] = i) : sparse!.set(seq, i);
    }
    slotOf = dense ? (seq) => (seq < dense.length ? dense[seq] : -1) : (seq) => sparse!.get(seq) ?? -1;
    placed = new Uint8Array(n);
    chunks = chunked.chunks();
  };

  /** One slice of a chunk: false when every chunk is read. */
  const fill = (): boolean => {
    if (!chunk || at === chunk.seqs.length) {
      const next = chunks!.next();
      if (next.done) return false;
      chunk = next.value;
      at = 0;
    }
    const { seqs, slots, vectors } = chunk;
    const end = sliceEnd(seqs.length, at);
    for (; at < end; at++) {
      const slot = slotOf(seqs[at]);
      // Vectors without a memory, past a re-embed cursor, or of rows written since the order was read: not placed.
      if (slot < 0) continue;
      // A vector seen again was re-written meanwhile (vec0 moves it to its newest chunk, read later): the later one wins.
      const from = slots[at] * DIMENSIONS;
      s.index.placeRow(slot, vectors.subarray(from, from + DIMENSIONS));
      if (!placed![slot]) state.loaded++;
      placed![slot] = 1;
    }
    return true;
  };

  return () => {
    if (rows) {
      // The row scan's fallback codes as it loads, as fromVec0 does.
      const more = rows();
      s.index.fillCodes(Infinity);
      return more;
    }
    if (project !== undefined) {
      readOrder(project);
      return true;
    }
    if (!into) {
      begin();
      return true;
    }
    if (!chunksDone) {
      try {
        if (fill()) return true;
      } catch (e) {
        rows = rowScanInstead(s, state, upTo, e);
        return true;
      }
      chunksDone = true;
      // Rows listed but never read (deleted since, or without a vector) stay empty slots.
      for (let i = 0; i < placed!.length; i++) if (!placed![i]) into.seqs[i] = 0;
    }
    const n = order.length;
    if (finished < n) {
      const from = finished;
      finished = Math.min(n, from + INDEX_RESTORE_SLICE);
      s.index.finishRestore(from, finished);
      return true;
    }
    return s.index.fillCodes(INDEX_CODE_SLICE);
  };
}

/** A chunk of a layout the reader does not know (Vec0LayoutError; anything else is rethrown): the load starts over row by row. */
function rowScanInstead(s: IndexContext, state: IndexState, upTo: number, e: unknown): () => boolean {
  if (!(e instanceof Vec0LayoutError)) throw e;
  s.log("warn", `${e.message}; loading the vector index row by row instead`);
  s.index.clear();
  state.loaded = 0;
  return fromVec0Rows(s, state, upTo);
}

/** One streamed scan of vec0's rows (its rowid range queries scan the whole table, so no paging by seq), INDEX_LOAD_CHUNK rows per call. */
function fromVec0Rows(s: IndexContext, state: IndexState, upTo: number): () => boolean {
  state.total = s.store.sqlite.query<{ n: number }, [number]>("SELECT count(*) AS n FROM memory_vec WHERE rowid <= ?").get(upTo)!.n;
  const rows = s.store.sqlite
    .query<VecRow, [number]>(
      "SELECT v.rowid AS seq, v.embedding AS embedding, m.project AS project FROM memory_vec v JOIN memories m ON m.seq = v.rowid WHERE v.rowid <= ?",
    )
    .iterate(upTo);
  return () => {
    for (let n = 0; n < INDEX_LOAD_CHUNK; n++) {
      const next = rows.next();
      if (next.done) return false;
      const r = next.value;
      if (r.embedding) s.index.upsert(r.seq, asVector(r.embedding), r.project);
      state.loaded++;
    }
    return true;
  };
}

/** Records the active embedder; the number of memories (counted up to `countUpTo`), or null when stored vectors are of another embedder (a re-embed is owed). */
function claimVectorSpace(s: IndexContext, countUpTo: number): number | null {
  const recorded = getMeta(s.store, "embedder_id");
  // Counted only as far as the caller's decision needs: a full count(*) at 100k costs ~6-12 ms before the server listens.
  const count = s.store.sqlite.query<{ n: number }, [number]>("SELECT count(*) AS n FROM (SELECT 1 FROM memories LIMIT ?)").get(countUpTo)!.n;
  if (recorded === null || (count === 0 && recorded !== s.embedderId)) {
    setMeta(s.store, "embedder_id", s.embedderId);
    return count;
  }
  if (recorded === s.embedderId) return count;
  s.store.sqlite.transaction(() => {
    setMeta(s.store, "embedder_id", s.embedderId);
    setMeta(s.store, "reembed_cursor", "0");
  })();
  s.log("warn", `stored vectors came from ${recorded}; re-embedding them with ${s.embedderId} in the background`);
  return null;
}

/**
 * Restores the index from the file saved next to the database when it is of
 * this embedder and the change log still reaches back to it (read in slices,
 * the event loop free between them), replays the log past it, and keeps it
 * only if it then holds exactly the stored vectors. False: load from vec0.
 */
async function fromIndexFile(s: IndexContext, state: IndexState): Promise<boolean> {
  const header = await readIndexFileInto(indexFileOf(s.store.file), (h) => {
    if (state.stop || getMeta(s.store, "reembed_cursor") !== null || h.embedder !== s.embedderId) return null;
    const newest = maxChange(s);
    const oldest = s.store.sqlite.query<{ n: number | null }, []>("SELECT min(id) AS n FROM vector_changes").get()!.n ?? 0;
    // Far behind (e.g. a bulk import since): one vec0 scan beats replaying that many changes.
    if (h.cursor > newest || (h.cursor < newest && oldest > h.cursor + 1) || newest - h.cursor > state.backgroundAbove) return null;
    return s.index.beginRestore(h.groupNames, h.count);
  });
  if (!header || state.stop) {
    s.index.clear();
    return false;
  }
  // The seq -> slot map in slices too (~10 ms per 100k rows in one go).
  for (let at = 0; at < header.count; at += INDEX_RESTORE_SLICE) {
    s.index.finishRestore(at, Math.min(header.count, at + INDEX_RESTORE_SLICE));
    await new Promise((r) => setImmediate(r));
    if (state.stop) return false;
  }
  state.cursor = header.cursor;
  state.dataVersion = -1;
  syncIndex(s, state);
  const stored = s.store.sqlite.query<{ n: number }, []>(`SELECT ${MEMORY_COUNT_SQL} AS n`).get()!.n;
  if (s.index.size === stored) {
    state.loaded = state.total = stored;
    return true;
  }
  s.log("warn", `the saved vector index holds ${s.index.size} vectors, the database ${stored}; loading from the database`);
  s.index.clear();
  return false;
}

/** Writes the index file for large stores (small ones load from vec0 in milliseconds); `background`: with the event loop free. */
export function saveIndex(s: IndexContext, state: IndexState, background = false): void {
  if (state.status !== "ready" || state.stop || s.index.size <= state.backgroundAbove || getMeta(s.store, "reembed_cursor") !== null) return;
  // Only a cache: when it cannot be written, the next start loads from vec0 instead.
  const failed = (e: unknown) => s.log("warn", `could not save the vector index: ${(e as Error).message}`);
  if (background) {
    state.saving = saveInBackground(s, state).catch(failed);
    return;
  }
  try {
    syncIndex(s, state);
    saveIndexFile(indexFileOf(s.store.file), s.index, s.embedderId, state.cursor);
  } catch (e) {
    failed(e);
  }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The save after a load: the index copied between requests, in slices, then
 * written off the event loop. A copy that a write spoilt (the index changed
 * between two slices) is taken again at the next lull; after
 * INDEX_SNAPSHOT_ATTEMPTS spoilt copies (writes that never pause) the copy is
 * taken in one go, as shutdown takes it.
 */
async function saveInBackground(s: IndexContext, state: IndexState): Promise<void> {
  for (let attempt = 1; !state.stop; attempt++) {
    syncIndex(s, state);
    const cursor = state.cursor;
    const snap =
      attempt <= INDEX_SNAPSHOT_ATTEMPTS ? await s.index.snapshotInSlices(INDEX_SNAPSHOT_SLICE_ROWS, nextTurn, () => !state.stop) : s.index.snapshot();
    if (state.stop) return;
    if (!snap) {
      await (s.quiet?.() ?? nextTurn());
      continue;
    }
    // Once stopped, shutdown has written a newer file: this one must not replace it afterwards.
    await saveIndexFileInBackground(indexFileOf(s.store.file), snap, s.embedderId, cursor, () => !state.stop);
    return;
  }
}

function pruneChanges(s: IndexContext, cursor: number): void {
  s.write(() => s.store.sqlite.run("DELETE FROM vector_changes WHERE id <= ?", [cursor - VECTOR_CHANGES_KEEP])).catch(() => {
    /* a read-only, busy or closed store keeps its log; pruning is housekeeping */
  });
}

/**
 * Brings the index up to date with writes of other connections. Called before
 * every vector search: when PRAGMA data_version has not moved (no other
 * connection committed), every logged change is this process's own, already
 * applied, and the cursor just advances. Otherwise the changed rows are read
 * back and applied (insert, update, delete, project move).
 */
export function syncIndex(s: IndexContext, state: IndexState): void {
  // Inside a caller's write transaction its own rows are not committed yet: the next search catches up.
  if (s.store.sqlite.inTransaction) return;
  // One read transaction: the change log and data_version describe the same snapshot.
  transact(s.store.sqlite, () => catchUp(s, state));
}

function catchUp(s: IndexContext, state: IndexState): void {
  const newest = maxChange(s);
  const dv = dataVersion(s);
  if (dv === state.dataVersion) {
    state.cursor = newest;
    return;
  }
  state.dataVersion = dv;
  if (newest === state.cursor) return;
  const oldest = s.store.sqlite.query<{ n: number | null }, []>("SELECT min(id) AS n FROM vector_changes").get()!.n ?? 0;
  if (oldest > state.cursor + 1) {
    // Pruned past our cursor: the log cannot say what changed.
    s.log("warn", "vector index fell behind the change log; reloading it");
    reloadAll(s, s.index, state);
    return;
  }
  const changed = s.store.sqlite
    .query<{ seq: number }, [number, number]>("SELECT DISTINCT seq FROM vector_changes WHERE id > ? AND id <= ?")
    .all(state.cursor, newest);
  const upTo = reembedLimit(s);
  const read = s.store.sqlite.query<VecRow, [string]>(
    "SELECT m.seq AS seq, v.embedding AS embedding, m.project AS project FROM memories m LEFT JOIN memory_vec v ON v.rowid = m.seq WHERE m.seq IN (SELECT value FROM json_each(?))",
  );
  // In slices: a bulk import elsewhere must not hold every vector in memory at once.
  for (let at = 0; at < changed.length; at += INDEX_LOAD_CHUNK) {
    const slice = changed.slice(at, at + INDEX_LOAD_CHUNK);
    const found = new Map(read.all(JSON.stringify(slice.map((c) => c.seq))).map((r) => [r.seq, r]));
    for (const { seq } of slice) {
      const r = found.get(seq);
      if (r?.embedding && seq <= upTo) s.index.upsert(seq, asVector(r.embedding), r.project);
      else if (!r) s.index.remove(seq);
      else if (s.index.has(seq)) s.index.regroup(seq, r.project);
    }
  }
  state.cursor = newest;
}

function reloadAll(s: IndexContext, index: VectorIndex, state: IndexState): void {
  index.clear();
  state.cursor = maxChange(s);
  state.loaded = 0;
  const load = fromVec0(s, state);
  while (load());
}
