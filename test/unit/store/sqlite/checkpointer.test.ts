import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readdirSync, readlinkSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Level } from "../../../../src/core/log";
import { WAL_AUTOCHECKPOINT_PAGES } from "../../../../src/store/sqlite/tuning";
import { openWalIndex, readWalIndex } from "../../../../src/store/sqlite/checkpointer-worker";
import type { CheckpointerOptions } from "../../../../src/store/sqlite/checkpointer";
import { openStore, type Store } from "../../../../src/store/sqlite/open";
import { WriteLock, type WriteGate } from "../../../../src/store/sqlite/write-lock";

// The WAL checkpoint worker on real SQLite files (src/store/sqlite/checkpointer.ts).
// SQLite only: the worker belongs to the SQLite store (see test/postgres-skip.txt).

const THRESHOLD = 64;
const CAP = 4000;
const open: Store[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

function store(extra: Partial<CheckpointerOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "memsvc-ckpt-"));
  const file = join(dir, "memsvc.db");
  const logs: { level: Level; message: string }[] = [];
  const s = openStore(file, {
    checkpointer: { log: (level, message) => logs.push({ level, message }), thresholdPages: THRESHOLD, capPages: CAP, pollMs: 2, ...extra },
  });
  open.push(s);
  s.sqlite.run("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)");
  return { s, file, logs };
}

/** Waits (in small sleeps, bounded by a count, not a clock) until `ok()` or gives up. */
async function until(ok: () => boolean, tries = 1000): Promise<void> {
  for (let i = 0; i < tries && !ok(); i++) await Bun.sleep(5);
}

const autocheckpoint = (s: Store) => s.sqlite.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()!.wal_autocheckpoint;

/** Rows of about one page each, in small transactions, yielding between them as requests would. */
async function write(s: Store, rows: number): Promise<void> {
  const insert = s.sqlite.query("INSERT INTO t (v) VALUES (randomblob(3000))");
  for (let i = 0; i < rows; i += 10) {
    s.sqlite.transaction(() => {
      for (let j = 0; j < 10; j++) insert.run();
    })();
    await Bun.sleep(0);
  }
}

/** The same rows through the server's write path: a WriteLock that passes the worker's gate. */
async function writeGated(s: Store, lock: WriteLock, rows: number): Promise<void> {
  const insert = s.sqlite.query("INSERT INTO t (v) VALUES (randomblob(3000))");
  for (let i = 0; i < rows; i += 10) {
    await lock.hold(() =>
      s.sqlite.transaction(() => {
        for (let j = 0; j < 10; j++) insert.run();
      })(),
    );
    await Bun.sleep(0);
  }
}

/** Connections this process holds open on `file` (Linux: /proc/self/fd). */
function handlesOn(file: string): number {
  return readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      return false;
    }
  }).length;
}

describe("WAL checkpoint worker", () => {
  test("checkpoints on its own connection while the main thread keeps writing; the main connection's autocheckpoint is the cap", async () => {
    const { s, file, logs } = store();
    await until(() => s.checkpointer!.mode === "worker");
    expect(s.checkpointer!.mode).toBe("worker");
    expect(autocheckpoint(s)).toBe(CAP);
    expect(logs.map((l) => l.message)).toContainEqual(expect.stringContaining("a worker thread checkpoints the WAL"));
    const shm = openWalIndex(file)!;
    let backfilledBelowCap = false;
    for (let round = 0; round < 40 && !backfilledBelowCap; round++) {
      await write(s, 100);
      await until(() => s.checkpointer!.stats().checkpoints > 0, 20);
      const wal = readWalIndex(shm)!;
      // Below the cap the main connection never checkpoints: frames copied there were copied by the worker.
      backfilledBelowCap = wal.mxFrame < CAP && wal.nBackfill > 0;
    }
    expect(backfilledBelowCap).toBe(true);
    const stats = s.checkpointer!.stats();
    expect(stats.checkpoints).toBeGreaterThan(0);
    expect(stats.frames).toBeGreaterThanOrEqual(THRESHOLD);
  });

  test("the WAL stays bounded: at the cap the main connection copies the rest and the WAL starts over", async () => {
    const { s, file } = store();
    await until(() => s.checkpointer!.mode === "worker");
    const shm = openWalIndex(file)!;
    let restarted = false;
    let previous = 0;
    for (let round = 0; round < 200 && !restarted; round++) {
      await write(s, 50);
      const wal = readWalIndex(shm)!;
      restarted = wal.mxFrame < previous;
      previous = wal.mxFrame;
    }
    expect(restarted).toBe(true);
    // The file never held much more than the cap (plus what one checkpoint's length of commits adds).
    expect(statSync(`${file}-wal`).size).toBeLessThan(CAP * 2 * (4096 + 24));
  });

  test("past restartPages the worker starts the WAL over itself, holding writes at the gate for its last round only; the cap is never reached", async () => {
    // A cap the test never reaches: a WAL that starts over did so by the worker's hand.
    const cap = 1_000_000;
    const { s, file } = store({ restartPages: 600, capPages: cap });
    await until(() => s.checkpointer!.mode === "worker");
    const lock = new WriteLock(s.checkpointer!.gate);
    const shm = openWalIndex(file)!;
    let starts = 0;
    let previous = 0;
    // Until the gate was used too: a round that copies everything while
    // writes pause (likelier on a loaded machine) starts the WAL over ungated.
    for (let round = 0; round < 400 && (starts < 3 || s.checkpointer!.stats().gateMs === 0); round++) {
      await writeGated(s, lock, 40);
      // Requests come with gaps between them; this loop alone would not.
      await Bun.sleep(2);
      const wal = readWalIndex(shm)!;
      if (wal.mxFrame < previous) starts++;
      previous = wal.mxFrame;
    }
    expect(starts).toBeGreaterThanOrEqual(3);
    const stats = s.checkpointer!.stats();
    expect(stats.restarts).toBeGreaterThanOrEqual(starts);
    expect(stats.gateMs).toBeGreaterThan(0);
    // Bounded by a few restarts' worth of frames, not by the cap.
    expect(statSync(`${file}-wal`).size).toBeLessThan(20 * 600 * (4096 + 24));
    expect(s.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()!.n % 10).toBe(0);
    expect(s.sqlite.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()!.integrity_check).toBe("ok");
  });

  test("a worker that is gone opens the gate for good: writes never wait for it", async () => {
    const { s } = store();
    await until(() => s.checkpointer!.mode === "worker");
    const gate = s.checkpointer!.gate;
    expect(gate.enter()).toBeNull();
    gate.leave();
    s.checkpointer!.kill();
    expect(gate.enter()).toBeNull();
    gate.leave();
    const lock = new WriteLock(gate);
    await writeGated(s, lock, 20);
    expect(s.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()!.n).toBe(20);
  });

  test("another SQLite library in the worker: it never opens the file and the main connection keeps checkpointing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "memsvc-ckpt-"));
    const file = join(dir, "memsvc.db");
    const logs: { level: Level; message: string }[] = [];
    const s = openStore(file, {
      checkpointer: { log: (level, message) => logs.push({ level, message }), library: { version: "3.0.0", sourceId: "not this one" }, pollMs: 2 },
    });
    open.push(s);
    await until(() => s.checkpointer!.mode === "off");
    expect(s.checkpointer!.mode).toBe("off");
    expect(logs).toContainEqual({ level: "warn", message: expect.stringContaining("did not start: the worker's SQLite is") });
    expect(autocheckpoint(s)).toBe(WAL_AUTOCHECKPOINT_PAGES);
    if (existsSync("/proc/self/fd")) expect(handlesOn(file)).toBe(1);
    expect(s.checkpointer!.stats().checkpoints).toBe(0);
  });

  test("a worker that dies: the main connection checkpoints itself again, and writes go on", async () => {
    // A threshold the test never reaches: every checkpoint here is the main connection's.
    const { s, file, logs } = store({ thresholdPages: 1_000_000, capPages: 2_000_000 });
    await until(() => s.checkpointer!.mode === "worker");
    expect(autocheckpoint(s)).toBe(2_000_000);
    s.checkpointer!.kill();
    await until(() => s.checkpointer!.mode === "off");
    expect(s.checkpointer!.mode).toBe("off");
    expect(autocheckpoint(s)).toBe(WAL_AUTOCHECKPOINT_PAGES);
    expect(logs).toContainEqual({ level: "error", message: expect.stringContaining("the checkpoint worker exited") });
    // Past the fallback's page count the main connection checkpoints at a commit: copied frames, or a WAL that started over.
    const shm = openWalIndex(file)!;
    const rows = WAL_AUTOCHECKPOINT_PAGES + 500;
    await write(s, rows);
    const wal = readWalIndex(shm)!;
    expect(wal.nBackfill > 0 || wal.mxFrame < WAL_AUTOCHECKPOINT_PAGES).toBe(true);
    expect(s.checkpointer!.stats().checkpoints).toBe(0);
    expect(s.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()!.n).toBe(rows);
  });

  test("close stops the worker first: the WAL is checkpointed whole and a fresh connection finds every row", async () => {
    const { s, file } = store();
    await until(() => s.checkpointer!.mode === "worker");
    await write(s, 600);
    await until(() => s.checkpointer!.stats().checkpoints > 0);
    expect(s.checkpointer!.stats().checkpoints).toBeGreaterThan(0);
    // Some rows are only in the WAL when the store closes.
    await write(s, 30);
    s.close();
    open.splice(open.indexOf(s), 1);
    expect(s.checkpointer!.mode).toBe("off");
    // The worker's connection was closed before the store's own.
    if (existsSync("/proc/self/fd")) expect(handlesOn(file)).toBe(0);
    // TRUNCATE succeeded: no other connection held the WAL.
    expect(existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0).toBe(0);
    const db = new Database(file, { readonly: true });
    expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()!.n).toBe(630);
    expect(db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()!.integrity_check).toBe("ok");
    db.close();
  });

  test("a store closed before its worker started: the worker never opens the file", async () => {
    const { s, file } = store();
    s.close();
    open.splice(open.indexOf(s), 1);
    await Bun.sleep(50);
    if (existsSync("/proc/self/fd")) expect(handlesOn(file)).toBe(0);
    expect(s.checkpointer!.mode).toBe("off");
  });

  test("no worker for :memory:, nor for a store opened without asking (CLI commands)", () => {
    const memory = openStore(":memory:", { checkpointer: { log: () => {} } });
    expect(memory.checkpointer).toBeNull();
    memory.close();
    const dir = mkdtempSync(join(tmpdir(), "memsvc-ckpt-"));
    const plain = openStore(join(dir, "memsvc.db"));
    expect(plain.checkpointer).toBeNull();
    expect(autocheckpoint(plain)).toBe(WAL_AUTOCHECKPOINT_PAGES);
    plain.close();
  });
});

describe("WriteLock with a gate", () => {
  test("a write waits for the gate, runs, then leaves it; writes stay in call order", async () => {
    const order: string[] = [];
    let open!: () => void;
    let entered = 0;
    let left = 0;
    const gate: WriteGate = {
      enter() {
        entered++;
        if (entered > 1) return null;
        return new Promise<void>((r) => (open = () => r()));
      },
      leave() {
        left++;
      },
    };
    const lock = new WriteLock(gate);
    const first = lock.hold(() => order.push("first"));
    const second = lock.hold(() => order.push("second"));
    await Bun.sleep(5);
    expect(order).toEqual([]);
    open();
    await Promise.all([first, second]);
    expect(order).toEqual(["first", "second"]);
    expect([entered, left]).toEqual([2, 2]);
  });

  test("a write that throws still leaves the gate", async () => {
    let left = 0;
    const lock = new WriteLock({ enter: () => null, leave: () => void left++ });
    await expect(lock.hold(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(left).toBe(1);
    expect(lock.busy).toBe(false);
  });
});

describe("the worker never drops the server connection's locks", () => {
  // SQLite's locks are POSIX record locks: they belong to the process, and closing any
  // descriptor of the file drops them all. The worker's own descriptors must outlive it.
  const python = Bun.which("python3");
  test.skipIf(!python || process.platform === "win32")("after the worker stopped, the -shm's dead-man byte is still held by the main connection", async () => {
    const { s, file } = store({ restartPages: 200, capPages: 1_000_000 });
    await until(() => s.checkpointer!.mode === "worker");
    const lock = new WriteLock(s.checkpointer!.gate);
    // Past restartPages: the worker opened the database file itself (its fsync between rounds).
    await writeGated(s, lock, 400);
    await until(() => s.checkpointer!.stats().restarts > 0);
    expect(s.checkpointer!.stats().restarts).toBeGreaterThan(0);
    s.checkpointer!.stop();
    s.sqlite.query("SELECT count(*) FROM t").get();
    // Another process asks for the byte every connection holds shared (unix VFS: 120 + 8) and for the database's shared-lock range.
    const probe = `
import fcntl, os, sys
def locked(path, start):
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, start)
        return False
    except OSError:
        return True
print("shm", locked(sys.argv[1] + "-shm", 128))
`;
    const out = Bun.spawnSync([python!, "-c", probe, file]);
    expect(out.stdout.toString().trim()).toBe("shm True");
  });
});
