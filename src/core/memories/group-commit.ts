import type { Storage } from "../storage";
import type { Services } from "../services";
import { GROUP_COMMIT_MAX } from "./tuning";

/**
 * One write of a group: `write` runs inside the group's transaction (under its
 * own savepoint), `apply` right after it succeeds, still inside (it updates
 * in-memory state the next write of the group must see, and returns how to
 * undo that if the group's commit fails).
 */
interface Job<T> {
  write: (tx: Storage) => Promise<T>;
  apply: (out: T) => (() => void) | null;
  resolve: (out: T) => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit for concurrent ingests on one connection. Writes queue here;
 * whoever finds no transaction running opens one and runs every queued write
 * in it, each under a savepoint, in arrival order, then commits once and
 * answers them all. One client alone gets a group of one, as before; eight
 * clients share the commit (and its WAL pages: the memories leaf, the FTS5
 * segment, the vec0 chunk). Results are those of one transaction per write in
 * the same order: each write sees the rows of those before it (same
 * transaction) and `apply` puts its vector in the live index before the next
 * write's link search runs. A write that throws rolls back to its savepoint
 * alone; a failed commit fails the whole group, undoes each `apply`, and
 * acknowledges nothing.
 */
export class GroupCommit {
  private queue: Job<unknown>[] = [];
  private running = false;

  constructor(private readonly storage: Storage) {}

  submit<T>(write: Job<T>["write"], apply: Job<T>["apply"]): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, apply, resolve, reject } as Job<unknown>);
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) await this.group();
    } finally {
      this.running = false;
    }
  }

  private async group(): Promise<void> {
    const done: { job: Job<unknown>; out: unknown }[] = [];
    const undo: (() => void)[] = [];
    let opened = false;
    try {
      await this.storage.transaction(async (tx) => {
        opened = true;
        while (this.queue.length > 0 && done.length < GROUP_COMMIT_MAX) {
          const job = this.queue.shift()!;
          let out: unknown;
          try {
            out = await tx.savepoint!(() => job.write(tx));
          } catch (e) {
            job.reject(e);
            // The group ends here: some errors (a full disk) roll the whole
            // transaction back, and then the commit fails for those before
            // it; the writes still queued start a transaction of their own.
            break;
          }
          // Listed first: an `apply` that throws fails the group, and this write with it.
          done.push({ job, out });
          const back = job.apply(out);
          if (back) undo.push(back);
        }
      });
    } catch (e) {
      for (const back of undo.reverse()) back();
      for (const d of done) d.job.reject(e);
      // No transaction at all (the database busy or closed): the waiting writes would each have failed alike.
      if (!opened) for (const job of this.queue.splice(0, GROUP_COMMIT_MAX)) job.reject(e);
      return;
    }
    for (const d of done) d.job.resolve(d.out);
  }
}

/**
 * Runs `write` in a transaction, grouped with concurrent ones where the
 * engine has savepoints (SQLite: one connection, one writer); elsewhere
 * (PostgreSQL: a connection per transaction, writers in parallel) in a
 * transaction of its own. `apply` runs after `write` succeeds and before the
 * next write of the group; it returns how to undo itself if the commit fails.
 */
export function commitGrouped<T>(s: Services, write: (tx: Storage) => Promise<T>, apply: (out: T) => (() => void) | null): Promise<T> {
  const storage = s.storage;
  const root = s.state.root;
  // Inside a caller's transaction (withStorage) the write joins that one instead.
  if (!storage.savepoint || storage !== root.storage) {
    return storage.transaction(write).then((out) => {
      apply(out);
      return out;
    });
  }
  root.state.groupCommit ??= new GroupCommit(storage);
  return root.state.groupCommit.submit(write, apply);
}
