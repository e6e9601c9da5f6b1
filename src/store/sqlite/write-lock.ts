/**
 * One SQLite connection serves every request, and a transaction on it spans
 * awaits (core composes store calls inside Storage.transaction). Between those
 * awaits other requests' continuations run on the same connection: a write of
 * theirs would land inside the open transaction (and vanish with its
 * rollback), and their BEGIN would fail. So every write takes this lock;
 * reads do not (they may see the open transaction's rows, never a torn file).
 * Written here because it is a dozen lines and must know nothing but promises.
 */
export class WriteLock {
  private tail: Promise<void> = Promise.resolve();
  private held = false;

  /** `gate`: another thread's say on when this connection writes (checkpointer.ts), or none. */
  constructor(private readonly gate: WriteGate | null = null) {}

  get busy(): boolean {
    return this.held;
  }

  /** Runs `fn` when no other holder is inside; holders run one after another, in call order. */
  async hold<T>(fn: () => T | Promise<T>): Promise<T> {
    const before = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    await before;
    const gate = this.gate;
    if (gate) {
      const waiting = gate.enter();
      if (waiting) await waiting;
    }
    this.held = true;
    try {
      return await fn();
    } finally {
      this.held = false;
      gate?.leave();
      release();
    }
  }
}

/**
 * A cross-thread admission for writes: `enter` returns null when the write may
 * go ahead at once, or a promise that settles when it may; `leave` after it.
 */
export interface WriteGate {
  enter(): Promise<void> | null;
  leave(): void;
}
