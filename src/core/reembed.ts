import { getMeta, setMeta } from "../db";
import type { Services } from "./services";
import { counted } from "./text";

const BATCH = 32;

/**
 * Re-embeds stored vectors after the embedder changed, in batches, each batch
 * one transaction that also advances the cursor: a crash resumes where it
 * stopped. Vectors join the in-memory index as they are redone, so search
 * never compares two vector spaces.
 */
export async function runReembed(s: Services, signal?: AbortSignal): Promise<{ done: number }> {
  let cursorText = getMeta(s.store, "reembed_cursor");
  if (cursorText === null) return { done: 0 };
  const total = s.store.sqlite.query<{ n: number }, [number]>("SELECT count(*) AS n FROM memories WHERE seq > ?").get(Number(cursorText))!.n;
  let done = 0;
  let lastReport = 0;
  const select = s.store.sqlite.query<{ seq: number; content: string; project: string | null }, [number, number]>(
    "SELECT seq, content, project FROM memories WHERE seq > ? ORDER BY seq LIMIT ?",
  );
  // vec0 has no upsert: delete then insert, inside the batch transaction.
  const drop = s.store.sqlite.prepare("DELETE FROM memory_vec WHERE rowid = ?");
  const insert = s.store.sqlite.prepare("INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)");
  while (cursorText !== null && !signal?.aborted) {
    const rows = select.all(Number(cursorText), BATCH);
    if (rows.length === 0) {
      s.store.sqlite.run("DELETE FROM meta WHERE key = 'reembed_cursor'");
      s.log("info", `re-embedding finished: ${counted(done, "memory", "memories")} now in ${s.embedder.id} space`);
      break;
    }
    const vectors = await s.embedder.embed(rows.map((r) => r.content), "document");
    const last = rows[rows.length - 1].seq;
    s.store.sqlite.transaction(() => {
      rows.forEach((r, i) => {
        drop.run(BigInt(r.seq));
        insert.run(BigInt(r.seq), vectors[i]);
      });
      setMeta(s.store, "reembed_cursor", String(last));
    })();
    // Rows deleted meanwhile are skipped: their memory row is gone.
    const alive = new Set(s.store.sqlite.query<{ seq: number }, [number, number]>("SELECT seq FROM memories WHERE seq BETWEEN ? AND ?").all(rows[0].seq, last).map((r) => r.seq));
    rows.forEach((r, i) => alive.has(r.seq) && s.index.upsert(r.seq, vectors[i], r.project));
    done += rows.length;
    cursorText = String(last);
    if (done - lastReport >= 500 || done === total) {
      lastReport = done;
      s.log("info", `re-embedding: ${done}/${total}`);
    }
    await new Promise((r) => setImmediate(r));
  }
  return { done };
}
