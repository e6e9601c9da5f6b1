import { Database } from "bun:sqlite";
import { fsyncSync, openSync, readSync } from "node:fs";
import { isMainThread, parentPort, workerData } from "node:worker_threads";

/**
 * The WAL checkpointer's thread (see checkpointer.ts for the main side).
 *
 * This file runs as a Worker made from its own text (a blob URL), the same
 * way from source and inside the compiled binary, so it imports nothing but
 * Bun's and Node's built-in modules: a relative import would not resolve from
 * a blob; the layout of the buffers it shares with the main thread comes in
 * its input. The main thread imports only its types (the bundler would mix a
 * text import and a code import of one file); tests import readWalIndex.
 */

export interface CheckpointerInput {
  memsvcCheckpointer: true;
  file: string;
  /** sqlite_version() and sqlite_source_id() of the main thread's connection: the worker must run the same library. */
  library: { version: string; sourceId: string };
  thresholdPages: number;
  /** The main connection's wal_autocheckpoint: near it, the worker copies whatever is left, so that COMMIT finds little. */
  capPages: number;
  /** From this many frames the worker starts the WAL over (see restart()), long before the cap. */
  restartPages: number;
  /** Longest the worker waits for the main thread's write to end before its gated round; it tries again later. */
  gateWaitMs: number;
  pollMs: number;
  /** Int32 slots of `control`, see CTL in checkpointer.ts. */
  ctl: { state: number; stop: number; closed: number; gate: number };
  control: SharedArrayBuffer;
  /** Float64 slots of `stats`, see STAT in checkpointer.ts. */
  stat: { checkpoints: number; frames: number; ms: number; restarts: number; gateMs: number; gateMaxMs: number };
  stats: SharedArrayBuffer;
}

export type CheckpointerMessage = { type: "ready" } | { type: "refused"; reason: string } | { type: "failed"; message: string };

export interface WalIndex {
  /** Frames in the WAL (the last valid frame's number). */
  mxFrame: number;
  /** Frames already copied into the database file. */
  nBackfill: number;
}

/**
 * Both header copies and nBackfill (bytes 96-99), and no further: SQLite on
 * Windows takes real byte-range locks on the -shm file from byte 120 (os_win.c,
 * WIN_SHM_BASE), and a read overlapping a writer's lock there would fail.
 */
const SHM_HEADER_BYTES = 100;
const WAL_INDEX_VERSION = 3007000;

/**
 * The WAL's length and how much of it is checkpointed, from the wal-index
 * header at the start of the -shm file (https://www.sqlite.org/walformat.html,
 * section 2.2: two copies of a 48-byte header, then nBackfill at byte 96, all
 * in native byte order: little-endian on every platform memsvc ships). SQLite maps that file into memory; a read sees the
 * same pages. Read without SQLite's locks, so the two header copies are
 * compared and the read retried when a writer was halfway through; null when
 * they never agree or the layout is not the one documented.
 */
export function readWalIndex(fd: number, buffer = Buffer.alloc(SHM_HEADER_BYTES)): WalIndex | null {
  for (let attempt = 0; attempt < 4; attempt++) {
    if (readSync(fd, buffer, 0, SHM_HEADER_BYTES, 0) < SHM_HEADER_BYTES) return null;
    if (buffer.readUInt32LE(0) !== WAL_INDEX_VERSION || buffer[12] !== 1) return null;
    if (buffer.compare(buffer, 0, 48, 48, 96) !== 0) continue;
    return { mxFrame: buffer.readUInt32LE(16), nBackfill: buffer.readUInt32LE(96) };
  }
  return null;
}

/**
 * Opens the -shm file for readWalIndex; null when it cannot be read. The
 * descriptor is never closed, not even when the layout is not the expected
 * one: SQLite's locks on the -shm file and the database are POSIX record
 * locks, which belong to the process, and closing any descriptor of the file
 * drops every one of them, the main connection's included
 * (https://www.sqlite.org/howtocorrupt.html, 2.2). SQLite keeps its own
 * descriptors open for that reason; one descriptor a worker is what this costs.
 */
export function openWalIndex(file: string): number | null {
  try {
    const fd = openSync(`${file}-shm`, "r");
    if (readWalIndex(fd)) return fd;
  } catch {
    /* no -shm file: not in WAL mode */
  }
  return null;
}

interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/** Values of the gate slot (CTL.gate): who may write to the database now. */
export const GATE = { free: 0, main: 1, worker: 2 } as const;

/** Frames left after an ungated round below which the gated round runs (a few ingests' worth: its fsync takes ~1 ms). */
const CONVERGED_FRAMES = 256;
/** Most frames a gated round copies: past it after every ungated round, the worker tries again at its next look. */
const GATED_FRAMES_MAX = 2048;
/** Ungated rounds before the gated one, at most: each copies what landed during the one before. */
const MAX_ROUNDS = 6;

/**
 * The worker's whole life: check the library, open the file, then every
 * `pollMs` look at the WAL and, once `thresholdPages` frames are not yet
 * copied (or any, when the WAL nears the main connection's autocheckpoint),
 * checkpoint PASSIVE: that never takes the write lock, so the main thread's
 * transactions never wait for it. Past `restartPages` frames it starts the
 * WAL over instead (restart() below), so the cap is only a safety net.
 */
export function runCheckpointer(input: CheckpointerInput, post: (m: CheckpointerMessage) => void): void {
  const ctl = new Int32Array(input.control);
  const stats = new Float64Array(input.stats);
  const CTL = input.ctl;
  const STAT = input.stat;
  let db: Database | null = null;
  let shm: number | null = null;
  let dbFd: number | null = null;
  try {
    // Two copies of SQLite in one process over one file break each other's POSIX locks: compare before opening it.
    const probe = new Database(":memory:");
    const library = probe.query<{ version: string; sourceId: string }, []>("SELECT sqlite_version() AS version, sqlite_source_id() AS sourceId").get()!;
    probe.close();
    if (library.version !== input.library.version || library.sourceId !== input.library.sourceId) {
      post({
        type: "refused",
        reason: `the worker's SQLite is ${library.version} (${library.sourceId}), the main thread's ${input.library.version} (${input.library.sourceId})`,
      });
      return;
    }
    // The main thread may have stopped already (a store closed right after it opened): then never touch the file.
    if (Atomics.compareExchange(ctl, CTL.state, 0, 1) !== 0) return;
    db = new Database(input.file, { readwrite: true, create: false });
    db.run("PRAGMA wal_autocheckpoint = 0");
    shm = openWalIndex(input.file);
    if (shm === null) {
      post({ type: "refused", reason: `${input.file}-shm is not a WAL index this code can read` });
      return;
    }
    const checkpoint = db.query<CheckpointResult, []>("PRAGMA wal_checkpoint(PASSIVE)");
    const buffer = Buffer.alloc(SHM_HEADER_BYTES);
    const nearCap = input.capPages / 2;
    const fd = shm;
    const complete = (r: CheckpointResult): boolean => r.busy === 0 && r.log > 0 && r.checkpointed === r.log;
    const pass = (before: WalIndex): CheckpointResult => {
      const started = performance.now();
      const r = checkpoint.get()!;
      stats[STAT.ms] += performance.now() - started;
      stats[STAT.checkpoints]++;
      stats[STAT.frames] += Math.max(0, r.checkpointed - before.nBackfill);
      // Everything copied: the next write starts the WAL over (counted for the
      // stats' "started the WAL over N times", whichever round got there).
      if (complete(r)) stats[STAT.restarts]++;
      return r;
    };
    /**
     * Starts the WAL over without the main thread ever copying it. SQLite
     * rewinds the WAL when a write begins and every frame in it is copied; a
     * checkpoint racing the main thread's commits never gets there, so the
     * WAL used to grow to the cap, where one COMMIT copied the rest and
     * fsynced it, 100-600 ms with every request waiting (measured at 100k).
     * Here ungated rounds copy nearly everything (each copies what landed
     * during the one before, fewer pages each time), then one round holds
     * the gate: the main thread's next write waits for it (~1-3 ms: a few
     * ingests' pages and their fsync), finds the WAL fully copied, and
     * starts it over.
     */
    const restart = (first: WalIndex): void => {
      let wal = first;
      for (let round = 0; round < MAX_ROUNDS && wal.mxFrame - wal.nBackfill > CONVERGED_FRAMES; round++) {
        // Writes paused long enough for this round to copy everything: no gate needed.
        if (complete(pass(wal))) return;
        // SQLite fsyncs the database file only in the checkpoint that copies
        // the last frame: all the pages every round before wrote (~40 ms of
        // fsync at 100k, measured). Flushed here, that round's fsync finds
        // only its own few pages.
        // Never closed, as the -shm descriptor (openWalIndex): closing it would drop the process's locks on the database.
        dbFd ??= openSync(input.file, "r+");
        fsyncSync(dbFd);
        wal = readWalIndex(fd, buffer) ?? wal;
        if (Atomics.load(ctl, CTL.stop) !== 0) return;
      }
      // Writes outran every round: gate anyway while what is left is bounded
      // (a longer hold, still far shorter than the cap's), else try later.
      if (wal.mxFrame - wal.nBackfill > GATED_FRAMES_MAX) return;
      const deadline = performance.now() + input.gateWaitMs;
      for (;;) {
        const was = Atomics.compareExchange(ctl, CTL.gate, GATE.free, GATE.worker);
        if (was === GATE.free) break;
        const left = deadline - performance.now();
        if (left <= 0 || Atomics.load(ctl, CTL.stop) !== 0) return;
        Atomics.wait(ctl, CTL.gate, was, left);
      }
      const held = performance.now();
      try {
        const now = readWalIndex(fd, buffer) ?? wal;
        pass(now);
      } finally {
        Atomics.store(ctl, CTL.gate, GATE.free);
        Atomics.notify(ctl, CTL.gate);
        const ms = performance.now() - held;
        stats[STAT.gateMs] += ms;
        if (ms > stats[STAT.gateMaxMs]) stats[STAT.gateMaxMs] = ms;
      }
    };
    post({ type: "ready" });
    while (Atomics.load(ctl, CTL.stop) === 0) {
      Atomics.wait(ctl, CTL.stop, 0, input.pollMs);
      if (Atomics.load(ctl, CTL.stop) !== 0) break;
      const wal = readWalIndex(shm, buffer);
      if (!wal) continue;
      const behind = wal.mxFrame - wal.nBackfill;
      if (behind === 0) continue;
      if (wal.mxFrame >= input.restartPages) restart(wal);
      else if (behind >= input.thresholdPages || wal.mxFrame >= nearCap) pass(wal);
    }
  } catch (e) {
    post({ type: "failed", message: (e as Error).message });
  } finally {
    // `shm` and `dbFd` stay open (see openWalIndex); SQLite closes its own descriptors safely.
    db?.close();
    Atomics.store(ctl, CTL.closed, 1);
    Atomics.notify(ctl, CTL.closed);
  }
}

if (!isMainThread && (workerData as CheckpointerInput | null)?.memsvcCheckpointer) {
  runCheckpointer(workerData as CheckpointerInput, (m) => parentPort!.postMessage(m));
}
