import { normalizeMemoryType } from "../memories";
import { MAX_CONTENT_CHARS } from "../memories/memories";
import { redact } from "../secrets";
import { IMPORT_EMBED_BATCH } from "./tuning";
import type { ImportItem, ReadResult, SourceProblem } from "./types";

/** What an item repeats exactly: a stored memory (its seq) or an earlier item of the import (its number). */
export type Repeat = { seq: number } | { item: number };

/** An item redacted and checked, with what it repeats (null: new) and, when the preparer embeds, its vector. */
export interface PreparedItem {
  item: ImportItem;
  repeat: Repeat | null;
  vector?: Float32Array;
}

/** A chunk of the source ready to write: `read` counts the items the reader yielded, before any was left out. */
export interface PreparedChunk {
  read: number;
  items: PreparedItem[];
  problems: SourceProblem[];
  sources: number;
  of?: { done: number; total: number };
}

/** Stored memories page by page (seq order), as reembedRows reads them; an empty list ends. */
export type StoredRows = (afterSeq: number, limit: number) => Promise<{ seq: number; content: string; project: string | null }[]>;

/** The exact-duplicate key: project and text, case and spacing aside. */
export const hashOf = (project: string | null, content: string) =>
  Bun.hash.wyhash(`${project ?? ""}\u0000${content.toLowerCase().replace(/\s+/g, " ").trim()}`);

/** The exact-duplicate key of every stored memory, to its seq (read once, before the import writes). */
export async function storedHashes(rows: StoredRows): Promise<Map<bigint, number>> {
  const existing = new Map<bigint, number>();
  for (let after = 0; ; ) {
    const page = await rows(after, 10_000);
    if (page.length === 0) break;
    for (const r of page) existing.set(hashOf(r.project, r.content), r.seq);
    after = page[page.length - 1].seq;
  }
  return existing;
}

/**
 * Redacts and checks each chunk's items and finds exact repeats (of what the
 * store held when the import began, then of earlier items): the part of an
 * import that needs no store, so it can run in a thread of its own while the
 * batches before are written. `embed`, when given, embeds the new items here
 * (an embedder that is plain computation, the offline hashing one).
 */
export async function* prepareStream(
  chunks: AsyncIterable<ReadResult>,
  existing: ReadonlyMap<bigint, number>,
  embed?: (texts: string[]) => Promise<Float32Array[]>,
): AsyncGenerator<PreparedChunk> {
  const firstOf = new Map<bigint, number>();
  let n = 0;
  for await (const chunk of chunks) {
    const out: PreparedChunk = { read: chunk.items.length, items: [], problems: [...chunk.problems], sources: chunk.sources, of: chunk.of };
    for (const it of chunk.items) {
      const content = (await redact(it.content)).trim();
      if (!content.replace(/[\p{Cc}\p{Cf}\s]/gu, "")) continue;
      if (content.length > MAX_CONTENT_CHARS) {
        out.problems.push({ source: it.provenance, message: `longer than ${MAX_CONTENT_CHARS} characters; left out` });
        continue;
      }
      const item: ImportItem = {
        ...it,
        content,
        createdAt: Math.round(it.createdAt),
        memoryType: normalizeMemoryType(it.memoryType),
        project: it.project?.trim().slice(0, 200) || null,
        sourceAgent: it.sourceAgent.slice(0, 200),
      };
      const h = hashOf(item.project, item.content);
      const seq = existing.get(h);
      const first = seq === undefined ? firstOf.get(h) : undefined;
      if (seq === undefined && first === undefined) firstOf.set(h, n);
      out.items.push({ item, repeat: seq !== undefined ? { seq } : first !== undefined ? { item: first } : null });
      n++;
    }
    if (embed) {
      const fresh = out.items.filter((p) => p.repeat === null);
      for (let i = 0; i < fresh.length; i += IMPORT_EMBED_BATCH) {
        const part = fresh.slice(i, i + IMPORT_EMBED_BATCH);
        const vectors = await embed(part.map((p) => p.item.content));
        part.forEach((p, k) => {
          p.vector = vectors[k];
        });
      }
    }
    yield out;
  }
}
