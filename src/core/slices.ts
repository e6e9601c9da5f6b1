import { BACKGROUND_DEFER_MAX_MS, BACKGROUND_QUIET_MS } from "./tuning";

/**
 * When the last request arrived. The HTTP layer notes every request; work
 * that runs beside traffic (slicer) waits for a lull in it.
 */
export class Traffic {
  private last = -Infinity;
  /** A request arrived. */
  note(): void {
    this.last = performance.now();
  }
  /** Milliseconds since the last request. */
  get idleMs(): number {
    return performance.now() - this.last;
  }
}

export interface SlicerOptions {
  /** Requests this recent mean traffic is flowing: wait for a lull this long. */
  quietMs?: number;
  /** Most time waited for lulls over the slicer's life: under constant traffic the work still gets done, in slices. */
  deferMaxMs?: number;
}

const immediate = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Background work on the event loop (the similarity calibration, the word-count
 * warm-up) gives way to requests after about `ms` of work: `await pause()`
 * between units of work costs a microtask while the slice lasts; once it is
 * spent, a setImmediate (after the pending I/O, so after requests that
 * arrived) and, while `traffic` shows requests coming back to back, a wait for
 * a lull (bounded by deferMaxMs in all). A fixed number of units per slice
 * does not bound the slice: a unit grows with the store (see
 * BACKGROUND_SLICE_MS).
 */
export function slicer(ms: number, traffic?: Traffic, opts: SlicerOptions = {}): () => Promise<void> | void {
  const quietMs = opts.quietMs ?? BACKGROUND_QUIET_MS;
  let deferLeft = opts.deferMaxMs ?? BACKGROUND_DEFER_MAX_MS;
  let since = performance.now();
  return () => {
    if (performance.now() - since < ms) return;
    return (async () => {
      await immediate();
      if (traffic) deferLeft -= await lull(traffic, quietMs, deferLeft);
      since = performance.now();
    })();
  };
}

/**
 * Waits until `traffic` has been quiet for `quietMs` (requests arriving back
 * to back), at most `maxMs`; resolves with the milliseconds waited. For a
 * single unit of background work that holds the event loop tens of ms and
 * cannot be sliced (the index file's snapshot).
 */
export async function lull(traffic: Traffic, quietMs = BACKGROUND_QUIET_MS, maxMs = BACKGROUND_DEFER_MAX_MS): Promise<number> {
  const started = performance.now();
  for (;;) {
    const left = maxMs - (performance.now() - started);
    const wait = Math.min(left, quietMs - traffic.idleMs);
    if (wait <= 0) return performance.now() - started;
    await sleep(wait);
  }
}
