import type { Services } from "../services";
import { counted } from "../text";

const BATCH = 32;

/** How long to wait when the embedder is being swapped under a batch (Services.useEmbedder is draining writes). */
const SWAP_WAIT_MS = 50;

/**
 * Re-embeds stored vectors after the embedder changed, in batches, each batch
 * one transaction that also advances the cursor: a crash resumes where it
 * stopped. Vectors join the in-memory index as they are redone, so search
 * never compares two vector spaces.
 *
 * The embedder can change while this runs (a downloaded model replacing the
 * fallback): the cursor and embedder id are re-read for every batch, and a
 * batch is written only if both are still what they were when it started, so
 * vectors of the old space never land after the switch reset the cursor.
 */
export async function runReembed(s: Services, signal?: AbortSignal): Promise<{ done: number }> {
  const store = s.storage.memories;
  let done = 0;
  let lastReport = 0;
  let total = -1;
  let totalFrom: string | null = null;
  // Until the active embedder's space is recorded, the cursor may read "nothing to do" wrongly.
  await s.indexState.claimed;
  while (!signal?.aborted) {
    const cursorText = (await store.embedderState()).reembedCursor;
    if (cursorText === null) break;
    const embedder = s.embedder;
    const expect = { cursor: cursorText, embedderId: embedder.id };
    if (cursorText === "0" && totalFrom !== embedder.id) {
      // A fresh start (first run, or a switch reset the cursor): count what lies ahead for the progress lines.
      totalFrom = embedder.id;
      total = await store.countMemories();
      done = 0;
      lastReport = 0;
    } else if (total < 0) {
      total = await store.countMemories(Number(cursorText));
    }
    const rows = await store.reembedRows(Number(cursorText), BATCH);
    if (rows.length === 0) {
      if (await store.finishReembed(expect)) {
        s.log("info", `re-embedding finished: ${counted(done, "memory", "memories")} now in ${embedder.id} space`);
        break;
      }
      await Bun.sleep(SWAP_WAIT_MS);
      continue;
    }
    const vectors = await embedder.embed(
      rows.map((r) => r.content),
      "document",
    );
    const last = rows[rows.length - 1].seq;
    const applied = await store.applyReembed(
      expect,
      rows.map((r, i) => ({ seq: r.seq, vector: vectors[i] })),
      String(last),
    );
    if (!applied) {
      await Bun.sleep(SWAP_WAIT_MS);
      continue;
    }
    // Rows deleted meanwhile are skipped: their memory row is gone.
    const alive = new Set(await store.seqsBetween(rows[0].seq, last));
    if (s.embedder === embedder)
      rows.forEach((r, i) => {
        alive.has(r.seq) && s.index.upsert(r.seq, vectors[i], r.project);
      });
    done += rows.length;
    if (done - lastReport >= 500 || done >= total) {
      lastReport = done;
      s.log("info", `re-embedding: ${done}/${total}`);
    }
    await new Promise((r) => setImmediate(r));
  }
  return { done };
}
