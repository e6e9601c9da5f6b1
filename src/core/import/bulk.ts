import { normalizeRelationship, type NewLink } from "../graph";
import { loadThresholds, thresholds } from "../search";
import type { Services } from "../services";
import { prepareStream, storedHashes, type PreparedChunk, type PreparedItem } from "./prepare";
import { IMPORT_BATCH, IMPORT_LINK_BATCH, IMPORT_SAMPLE } from "./tuning";
import type { ImportItem, ItemLink, SourceProblem } from "./types";
import { writeBatch } from "./write-batch";

export interface ImportOptions {
  dryRun?: boolean;
  /** Items written (or, dry, looked at) so far and of how many; while a folder streams, files read and of how many. */
  progress?: (done: number, total: number, label: string) => void;
}

export interface ImportOutcome {
  /** Items the sources yielded. */
  read: number;
  /** Files (or databases) read without a problem. */
  sources: number;
  added: number;
  /** Near-duplicates of a memory (or of an earlier item) merged into it, as distill merges. */
  merged: number;
  /** Items left after exact repeats: what --dry-run calls new (some may still merge). */
  candidates: number;
  /** Exact repeats (same project, same text) of a memory already there or of an earlier item. */
  skipped: number;
  /** Named links (wikilinks, relations, sessions) written with at least one new end. */
  links: number;
  /** Named links whose target is in neither the import nor the store. */
  unresolved: number;
  dryRun: boolean;
  sample: { content: string; memory_type: string; project: string | null; source_agent: string; provenance: string }[];
  problems: SourceProblem[];
}

/** The items of a source read whole, prepared in this thread (tests, the profile bench). */
export async function importItems(s: Services, input: readonly ImportItem[], opts: ImportOptions = {}): Promise<ImportOutcome> {
  const existing = await storedHashes((after, limit) => s.storage.memories.reembedRows(after, limit));
  const one = (async function* () {
    yield { items: [...input], problems: [], sources: 0 };
  })();
  return importPrepared(s, prepareStream(one, existing), opts);
}

/**
 * The one write path of every import, fed by prepareStream (in this thread
 * or a worker's): skips exact repeats, merges near-duplicates by distill's
 * rule (same project, similarity at the calibrated distill-merge threshold:
 * strengthened, or rewritten with the old text kept as a version), inserts the
 * rest with their vectors, tags and similarity links, IMPORT_BATCH new items
 * per transaction as the chunks come (only the batches in hand are held, not
 * the source), and finally writes the links the sources named between items
 * (by key). A failure in a batch rolls that batch back; batches before it
 * stay, and a re-run skips them. `s` null: a dry run into a home not created yet.
 */
export async function importPrepared(s: Services | null, chunks: AsyncIterable<PreparedChunk>, opts: ImportOptions = {}): Promise<ImportOutcome> {
  const dryRun = opts.dryRun === true || s === null;
  const progress = opts.progress ?? (() => {});
  const outcome: ImportOutcome = {
    read: 0,
    sources: 0,
    added: 0,
    merged: 0,
    candidates: 0,
    skipped: 0,
    links: 0,
    unresolved: 0,
    dryRun,
    sample: [],
    problems: [],
  };
  // Per item, for the link phase: its keys and links, what it repeats, the memory it became.
  const keysOf: string[][] = [];
  const linksOf: ItemLink[][] = [];
  const repeatOf: PreparedItem["repeat"][] = [];
  const finalId: (string | null)[] = [];
  let pending: { n: number; p: PreparedItem }[] = [];
  const th = s && !dryRun ? (await loadThresholds(s), thresholds(s)) : null;
  const flush = async (all: boolean) => {
    while (s && th && (pending.length >= IMPORT_BATCH || (all && pending.length > 0))) {
      const batch = pending.slice(0, IMPORT_BATCH);
      pending = pending.slice(IMPORT_BATCH);
      const r = await writeBatch(
        s,
        batch.map((b) => b.p.item),
        batch.map((b) => b.p.vector),
        th.distillMerge,
        th.link,
      );
      batch.forEach((b, k) => {
        finalId[b.n] = r.ids[k];
      });
      outcome.added += r.inserted;
      outcome.merged += r.merged;
    }
  };
  let files: { done: number; total: number } | undefined;
  const tell = () => {
    const done = outcome.added + outcome.merged + outcome.skipped;
    if (files) progress(files.done, files.total, `${dryRun ? "reading" : "importing"} ${done} items, files ${files.done}/${files.total}`);
    else progress(done, outcome.read, `${dryRun ? "reading" : "importing"} ${done}/${outcome.read}`);
  };
  // Into an empty store, the secondary indexes are built once when the import ends (crash-safe: see deferIndexes).
  const deferred = s && th ? ((await s.storage.memories.deferIndexes?.()) ?? false) : false;
  try {
    for await (const chunk of chunks) {
      outcome.read += chunk.read;
      outcome.sources += chunk.sources;
      outcome.problems.push(...chunk.problems);
      files = chunk.of;
      for (const p of chunk.items) {
        const n = keysOf.length;
        keysOf.push(p.item.keys);
        linksOf.push(p.item.links);
        repeatOf.push(p.repeat);
        finalId.push(null);
        if (p.repeat) {
          outcome.skipped++;
          continue;
        }
        outcome.candidates++;
        if (outcome.sample.length < IMPORT_SAMPLE) {
          const it = p.item;
          outcome.sample.push({
            content: it.content,
            memory_type: it.memoryType,
            project: it.project,
            source_agent: it.sourceAgent,
            provenance: it.provenance,
          });
        }
        if (!dryRun) pending.push({ n, p });
      }
      await flush(false);
      tell();
    }
    await flush(true);
    if (dryRun || !s) return outcome;
    tell();
    await writeNamedLinks(s, outcome, { keysOf, linksOf, repeatOf, finalId });
  } finally {
    if (s && deferred) await s.storage.memories.buildDeferredIndexes?.();
  }
  return outcome;
}

/** The links the sources named between items, resolved by key once every item is written. */
async function writeNamedLinks(
  s: Services,
  outcome: ImportOutcome,
  it: { keysOf: string[][]; linksOf: ItemLink[][]; repeatOf: PreparedItem["repeat"][]; finalId: (string | null)[] },
): Promise<void> {
  const { keysOf, linksOf, repeatOf, finalId } = it;
  // Repeats of stored memories: their ids, so links to and from them land.
  const seqs = repeatOf.flatMap((r) => (r && "seq" in r ? [r.seq] : []));
  const idOfSeq = new Map<number, string>();
  for (let i = 0; i < seqs.length; i += 5000) for (const row of await s.storage.distill.memoriesBySeq(seqs.slice(i, i + 5000))) idOfSeq.set(row.seq, row.id);
  const idOf = (i: number): string | null => {
    const r = repeatOf[i];
    if (!r) return finalId[i];
    return "seq" in r ? (idOfSeq.get(r.seq) ?? null) : finalId[r.item];
  };
  const isNew = new Set(finalId.filter((x, i): x is string => x !== null && repeatOf[i] === null));
  const byKey = new Map<string, string>();
  keysOf.forEach((keys, i) => {
    const id = idOf(i);
    if (id) for (const k of keys) if (!byKey.has(k)) byKey.set(k, id);
  });
  const links = new Map<string, NewLink>();
  linksOf.forEach((named, i) => {
    const from = idOf(i);
    if (!from) return;
    for (const l of named) {
      const to = byKey.get(l.to);
      if (!to) {
        outcome.unresolved++;
        continue;
      }
      if (to === from) continue;
      const relationship = normalizeRelationship(l.relationship);
      const key = `${from}\u0000${to}\u0000${relationship}`;
      const weight = Math.max(0, Math.min(1, l.weight ?? 0.9));
      if ((links.get(key)?.weight ?? -1) < weight) links.set(key, { fromId: from, toId: to, relationship, weight });
    }
  });
  const all = [...links.values()];
  outcome.links = all.filter((l) => isNew.has(l.fromId) || isNew.has(l.toId)).length;
  // Idempotent (the stronger weight wins): links between repeats are written again harmlessly.
  for (let i = 0; i < all.length; i += IMPORT_LINK_BATCH) {
    const chunk = all.slice(i, i + IMPORT_LINK_BATCH);
    await s.storage.transaction((tx) => tx.graph.addLinks(chunk, s.now()));
  }
}
