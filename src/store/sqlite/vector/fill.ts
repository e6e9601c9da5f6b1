/** Background work after a load from the index file: the prefilter codes and the float vectors it does not keep. */
import { DIMENSIONS } from "../../../embed/types";
import type { IndexContext, IndexState } from "./load";
import { INDEX_CODE_SLICE } from "./tuning";
import { vec0Chunks } from "./vec0-chunks";

/**
 * Gives rows still without a prefilter code (changes replayed after a load
 * from the index file) their codes, in slices between requests (searches
 * score uncoded rows exactly until done), then `done`.
 */
export function fillCodes(s: IndexContext, state: IndexState, done: () => void): void {
  const step = () => {
    try {
      if (state.stop) return;
      if (s.index.fillCodes(INDEX_CODE_SLICE)) setImmediate(step);
      else done();
    } catch (e) {
      s.log("warn", `vector index coding stopped: ${(e as Error).message}`);
    }
  };
  step();
}

/**
 * Gives the rows of a load from the index file their float vectors (the
 * search's exact similarity; the file keeps the int8 rows only), from vec0's
 * chunks, one chunk (1024 vectors, a few ms) per turn of the event loop.
 * Until a row has its float, a search that needs it reads it from vec0 by
 * itself (vectorSource, ~0.5 ms a row). A chunk's vector that is not the one
 * the index's row was made from (written since, its change not replayed yet)
 * is left to the change log's upsert (VectorRows.adoptFloat).
 */
export function fillFloats(s: IndexContext, state: IndexState): void {
  const chunked = vec0Chunks(s.store.sqlite, "memory_vec");
  if (!chunked) return;
  const chunks = chunked.chunks();
  const started = performance.now();
  let kept = 0;
  const step = () => {
    try {
      if (state.stop) return;
      const next = chunks.next();
      if (next.done) {
        s.log("info", `vector index: ${kept} float vectors filled from vec0 in ${Math.round(performance.now() - started)} ms`);
        return;
      }
      const { seqs, slots, vectors } = next.value;
      for (let i = 0; i < seqs.length; i++) {
        const from = slots[i] * DIMENSIONS;
        if (s.index.adoptFloat(seqs[i], vectors.subarray(from, from + DIMENSIONS))) kept++;
      }
      setImmediate(step);
    } catch (e) {
      s.log("warn", `vector index float fill stopped: ${(e as Error).message}`);
    }
  };
  setImmediate(step);
}
