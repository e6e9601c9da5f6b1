/**
 * Background work on the event loop (the similarity calibration, the word-count
 * warm-up) gives way to requests after about `ms` of work: `await pause()`
 * between units of work costs a microtask while the slice lasts and a
 * setImmediate (after the pending I/O, so after requests that arrived) once it
 * is spent. A fixed number of units per slice does not bound the slice: a unit
 * grows with the store (see BACKGROUND_SLICE_MS).
 */
export function slicer(ms: number): () => Promise<void> | void {
  let since = performance.now();
  return () => {
    if (performance.now() - since < ms) return;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}
