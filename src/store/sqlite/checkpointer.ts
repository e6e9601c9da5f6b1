import type { Database } from "bun:sqlite";
import type { Logger } from "../../core/log";
import {
  WAL_AUTOCHECKPOINT_PAGES,
  WAL_WORKER_CAP_PAGES,
  WAL_WORKER_GATE_WAIT_MS,
  WAL_WORKER_POLL_MS,
  WAL_WORKER_RESTART_PAGES,
  WAL_WORKER_THRESHOLD_PAGES,
} from "./tuning";
import * as workerModule from "./checkpointer-worker.ts" with { type: "text" };
import type { CheckpointerInput, CheckpointerMessage } from "./checkpointer-worker";
import type { WriteGate } from "./write-lock";
import { counted } from "../../core/text";

/**
 * WAL checkpoints off the main thread. With wal_autocheckpoint, the COMMIT
 * that takes the WAL past the limit copies every page back into the database
 * file and fsyncs, on the server's only JavaScript thread, and every request
 * waits behind it. Here a Worker with its own connection to the same file does
 * most of that copying (checkpointer-worker.ts).
 *
 * The main connection keeps an autocheckpoint, at WAL_WORKER_CAP_PAGES: the
 * hard cap. It is also how the WAL starts over. A WAL is only rewound from its
 * beginning once every frame in it is copied, which a checkpoint on another
 * thread rarely sees while commits keep landing during it; so the WAL grows to
 * the cap, and the COMMIT that reaches it copies what the worker has not yet
 * (a few thousand pages at most, against WAL_AUTOCHECKPOINT_PAGES before)
 * and the next write starts the WAL over. A worker that is stuck or behind
 * leaves more to that COMMIT, never an unbounded WAL. A worker that refused to
 * start (another SQLite library in it), failed or died puts the main
 * connection back on WAL_AUTOCHECKPOINT_PAGES. Only the server starts one
 * (openStore's `checkpointer` option): a CLI command's short-lived store has
 * no use for it, nor do :memory: and read-only stores.
 */
export interface Checkpointer {
  /** "starting" until the worker opened the file; "worker" while it checkpoints; "off": the main connection does it all. */
  readonly mode: "starting" | "worker" | "off";
  /** What the worker did so far. */
  stats(): CheckpointerStats;
  /**
   * What every write on the main connection passes (write-lock.ts): while
   * the worker finishes copying the WAL so it can start over, a write waits
   * for it (~1-3 ms) instead of landing frames the copy would have to chase.
   */
  readonly gate: WriteGate;
  /**
   * Stops the worker and waits (blocking, bounded) until its connection is
   * closed: the store's close then checkpoints the whole WAL itself.
   */
  stop(): void;
  /** Tests: ends the worker abruptly, as a crash would. */
  kill(): void;
}

export interface CheckpointerStats {
  checkpoints: number;
  frames: number;
  ms: number;
  /** Gated rounds that copied the whole WAL, so the next write started it over. */
  restarts: number;
  /** Time the worker held the gate, in all and at most once. */
  gateMs: number;
  gateMaxMs: number;
  /** Writes on the main thread that waited for the gate, and how long in all. */
  waits: number;
  waitMs: number;
}

export interface CheckpointerOptions {
  log: Logger;
  thresholdPages?: number;
  capPages?: number;
  restartPages?: number;
  pollMs?: number;
  /** Tests: what the worker must find as its SQLite library (a mismatch makes it refuse). */
  library?: { version: string; sourceId: string };
}

/** Int32 slots of the control buffer the two threads share. */
const CTL = {
  /** 0 starting, 1 the worker owns (or is opening) its connection, 2 the main thread cancelled it before that. */
  state: 0,
  /** The main thread sets 1 to stop the worker. */
  stop: 1,
  /** The worker sets 1 once its connection is closed (or was never opened) and it will not touch the file again. */
  closed: 2,
  /** Who may write now: GATE in checkpointer-worker.ts (free, the main thread inside a write, the worker's gated round). */
  gate: 3,
  length: 4,
} as const;

/** The GATE values of checkpointer-worker.ts (its file is imported as text here: only its types come along). */
const GATE_FREE = 0;
const GATE_MAIN = 1;
const GATE_WORKER = 2;

/** Float64 slots of the statistics buffer, written by the worker only. */
const STAT = {
  /** PRAGMA wal_checkpoint(PASSIVE) calls that had pages to copy. */
  checkpoints: 0,
  /** WAL frames those calls backfilled into the database file. */
  frames: 1,
  /** Wall milliseconds the worker spent inside them. */
  ms: 2,
  /** Gated rounds that left the WAL fully copied. */
  restarts: 3,
  /** Wall milliseconds the worker held the gate, in all and the longest once. */
  gateMs: 4,
  gateMaxMs: 5,
  length: 6,
} as const;

/** Longest a write waits for the worker's gated round (it takes ~1-3 ms); past it the write goes ahead. */
const GATE_WAIT_MAX_MS = 250;

/** Longest the store's close waits for the worker to finish a checkpoint and close its connection. */
const STOP_WAIT_MS = 10_000;

// Bun hands the file's text to a `with { type: "text" }` import; TypeScript sees the module.
const WORKER_SOURCE = (workerModule as unknown as { default: string }).default;

export function startCheckpointer(sqlite: Database, file: string, opts: CheckpointerOptions): Checkpointer {
  const { log } = opts;
  const thresholdPages = opts.thresholdPages ?? WAL_WORKER_THRESHOLD_PAGES;
  const capPages = opts.capPages ?? WAL_WORKER_CAP_PAGES;
  const control = new SharedArrayBuffer(CTL.length * 4);
  const statsBuffer = new SharedArrayBuffer(STAT.length * 8);
  const ctl = new Int32Array(control);
  const stats = new Float64Array(statsBuffer);
  const library =
    opts.library ?? sqlite.query<{ version: string; sourceId: string }, []>("SELECT sqlite_version() AS version, sqlite_source_id() AS sourceId").get()!;
  const input: CheckpointerInput = {
    memsvcCheckpointer: true,
    file,
    library,
    thresholdPages,
    capPages,
    restartPages: opts.restartPages ?? WAL_WORKER_RESTART_PAGES,
    gateWaitMs: WAL_WORKER_GATE_WAIT_MS,
    pollMs: opts.pollMs ?? WAL_WORKER_POLL_MS,
    ctl: CTL,
    control,
    stat: STAT,
    stats: statsBuffer,
  };
  let mode: Checkpointer["mode"] = "starting";
  let stopped = false;
  let exited = false;
  const url = URL.createObjectURL(new File([WORKER_SOURCE], "checkpointer-worker.ts", { type: "text/typescript" }));
  // Unref'd: the worker never keeps the process alive (a crash-safe checkpoint may be cut short at exit).
  // A small heap (smol): its JavaScript is one loop. The thread costs ~6 MB of RSS either way (measured).
  const worker = new Worker(url, { workerData: input, ref: false, smol: true } as WorkerOptions);

  const autocheckpoint = (pages: number) => {
    try {
      sqlite.run(`PRAGMA wal_autocheckpoint = ${pages}`);
    } catch (e) {
      log("error", `wal: could not set wal_autocheckpoint = ${pages}: ${(e as Error).message}`);
    }
  };
  let waits = 0;
  let waitMs = 0;
  /** A worker that is gone never releases the gate: open it for good. */
  const openGate = () => {
    gateOff = true;
    Atomics.store(ctl, CTL.gate, GATE_FREE);
    Atomics.notify(ctl, CTL.gate);
  };
  let gateOff = false;
  const gate: WriteGate = {
    enter() {
      if (gateOff || Atomics.compareExchange(ctl, CTL.gate, GATE_FREE, GATE_MAIN) === GATE_FREE) return null;
      return (async () => {
        const started = performance.now();
        waits++;
        // Bounded: the worker holds the gate for one round; a worker that stalls past this only costs its restart.
        const deadline = started + GATE_WAIT_MAX_MS;
        while (!gateOff && Atomics.compareExchange(ctl, CTL.gate, GATE_FREE, GATE_MAIN) !== GATE_FREE) {
          const left = deadline - performance.now();
          if (left <= 0) break;
          const w = Atomics.waitAsync(ctl, CTL.gate, GATE_WORKER, left);
          if (w.async) await w.value;
        }
        waitMs += performance.now() - started;
      })();
    },
    leave() {
      // Only our own mark: after a timed-out wait the worker may still hold it.
      if (Atomics.compareExchange(ctl, CTL.gate, GATE_MAIN, GATE_FREE) === GATE_MAIN) Atomics.notify(ctl, CTL.gate);
    },
  };
  /** For good: the main connection checkpoints itself from now on. */
  const fallBack = (level: "warn" | "error", why: string) => {
    openGate();
    if (mode === "off") return;
    const was = mode;
    mode = "off";
    if (was !== "starting") autocheckpoint(WAL_AUTOCHECKPOINT_PAGES);
    log(level, `wal: ${why}; the main connection checkpoints the WAL itself (every ${WAL_AUTOCHECKPOINT_PAGES} pages)`);
  };

  worker.onmessage = (event: MessageEvent<CheckpointerMessage>) => {
    const m = event.data;
    // The worker has loaded its code by the time it says anything.
    URL.revokeObjectURL(url);
    if (stopped) return;
    if (m.type === "ready") {
      if (mode !== "starting") return;
      autocheckpoint(capPages);
      mode = "worker";
      log("info", `wal: a worker thread checkpoints the WAL (past ${thresholdPages} pages; this thread only at ${capPages})`);
    } else if (m.type === "refused") {
      fallBack("warn", `the checkpoint worker did not start: ${m.reason}`);
    } else if (m.type === "failed") {
      fallBack("error", `the checkpoint worker failed: ${m.message}`);
    }
  };
  worker.onerror = (event: ErrorEvent) => {
    event.preventDefault();
    fallBack("error", `the checkpoint worker crashed: ${event.message}`);
  };
  worker.addEventListener("close", () => {
    exited = true;
    if (!stopped) fallBack("error", "the checkpoint worker exited");
  });

  const readStats = (): CheckpointerStats => ({
    checkpoints: stats[STAT.checkpoints]!,
    frames: stats[STAT.frames]!,
    ms: Math.round(stats[STAT.ms]!),
    restarts: stats[STAT.restarts]!,
    gateMs: Math.round(stats[STAT.gateMs]! * 10) / 10,
    gateMaxMs: Math.round(stats[STAT.gateMaxMs]! * 10) / 10,
    waits,
    waitMs: Math.round(waitMs * 10) / 10,
  });

  return {
    get mode() {
      return mode;
    },
    stats: readStats,
    gate,
    stop() {
      if (stopped) return;
      stopped = true;
      Atomics.store(ctl, CTL.stop, 1);
      Atomics.notify(ctl, CTL.stop);
      // A worker that has not reached its open yet never will; one that has is waited for.
      if (Atomics.compareExchange(ctl, CTL.state, 0, 2) !== 0 && !exited && Atomics.wait(ctl, CTL.closed, 0, STOP_WAIT_MS) === "timed-out") {
        log("warn", `wal: the checkpoint worker did not close its connection within ${STOP_WAIT_MS / 1000} s`);
      }
      worker.terminate();
      openGate();
      URL.revokeObjectURL(url);
      if (mode !== "off") autocheckpoint(WAL_AUTOCHECKPOINT_PAGES);
      const s = readStats();
      if (s.checkpoints > 0)
        log(
          "info",
          `wal: the checkpoint worker backfilled ${counted(s.frames, "page")} in ${counted(s.checkpoints, "checkpoint")} (${s.ms} ms) and started the WAL over ${counted(s.restarts, "time")} (gate held ${s.gateMs} ms in all, ${s.gateMaxMs} at most; ${s.waits} writes waited ${s.waitMs} ms)`,
        );
      mode = "off";
    },
    kill() {
      worker.terminate();
      openGate();
      // Its `finally` never runs, and the close event may come later than a stop(): nothing to wait for.
      exited = true;
    },
  };
}
