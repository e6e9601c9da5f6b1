import { getMeta, setMeta } from "../../store/sqlite";
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
  let done = 0;
  let lastReport = 0;
  let total = -1;
  let totalFrom: string | null = null;
  const select = s.store.sqlite.query<{ seq: number; content: string; project: string | null }, [number, number]>(
    "SELECT seq, content, project FROM memories WHERE seq > ? ORDER BY seq LIMIT ?",
  );
  // vec0 has no upsert: delete then insert, inside the batch transaction.
  const drop = s.store.sqlite.prepare("DELETE FROM memory_vec WHERE rowid = ?");
  const insert = s.store.sqlite.prepare("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)");
  const unchanged = (cursor: string, embedderId: string) => getMeta(s.store, "reembed_cursor") === cursor && getMeta(s.store, "embedder_id") === embedderId;
  while (!signal?.aborted) {
    const cursorText = getMeta(s.store, "reembed_cursor");
    if (cursorText === null) break;
    const embedder = s.embedder;
    if (cursorText === "0" && totalFrom !== embedder.id) {
      // A fresh start (first run, or a switch reset the cursor): count what lies ahead for the progress lines.
      totalFrom = embedder.id;
      total = s.store.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM memories").get()!.n;
      done = 0;
      lastReport = 0;
    } else if (total < 0) {
      total = s.store.sqlite.query<{ n: number }, [number]>("SELECT count(*) AS n FROM memories WHERE seq > ?").get(Number(cursorText))!.n;
    }
    const rows = select.all(Number(cursorText), BATCH);
    if (rows.length === 0) {
      const finished = s.store.sqlite.transaction(() => {
        if (!unchanged(cursorText, embedder.id)) return false;
        s.store.sqlite.run("DELETE FROM meta WHERE key = 'reembed_cursor'");
        return true;
      })();
      if (finished) {
        s.log("info", `re-embedding finished: ${counted(done, "memory", "memories")} now in ${embedder.id} space`);
        break;
      }
      await Bun.sleep(SWAP_WAIT_MS);
      continue;
    }
    const vectors = await embedder.embed(rows.map((r) => r.content), "document");
    const last = rows[rows.length - 1].seq;
    const applied = s.store.sqlite.transaction(() => {
      if (!unchanged(cursorText, embedder.id)) return false;
      rows.forEach((r, i) => {
        drop.run(BigInt(r.seq));
        insert.run(BigInt(r.seq), vectors[i]);
      });
      setMeta(s.store, "reembed_cursor", String(last));
      return true;
    })();
    if (!applied) {
      await Bun.sleep(SWAP_WAIT_MS);
      continue;
    }
    // Rows deleted meanwhile are skipped: their memory row is gone.
    const alive = new Set(s.store.sqlite.query<{ seq: number }, [number, number]>("SELECT seq FROM memories WHERE seq BETWEEN ? AND ?").all(rows[0].seq, last).map((r) => r.seq));
    if (s.embedder === embedder) rows.forEach((r, i) => alive.has(r.seq) && s.index.upsert(r.seq, vectors[i], r.project));
    done += rows.length;
    if (done - lastReport >= 500 || done >= total) {
      lastReport = done;
      s.log("info", `re-embedding: ${done}/${total}`);
    }
    await new Promise((r) => setImmediate(r));
  }
  return { done };
}
