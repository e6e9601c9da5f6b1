import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportAll, importAll } from "../../../../src/core/memories";
import { migrateStore } from "../../../../src/core/memories/migrate";
import { writeCorpus } from "../../../helpers/memory-corpus";
import { dbRows } from "../../../helpers/engine";
import { makeServices } from "../../../helpers/services";

const dir = () => mkdtempSync(join(tmpdir(), "memsvc-migrate-"));
/** An export without its time stamp, lines sorted: what must be equal between two stores holding the same data (row order within a kind is the engine's). */
const exported = (file: string) =>
  readFileSync(file, "utf8")
    .replace(/"exported_at":"[^"]*",/, "")
    .split("\n")
    .sort()
    .join("\n");

test("migrate copies a store batch by batch; an interrupted run resumes from the target's cursor and ends identical; a re-run is a no-op", async () => {
  const corpus = join(dir(), "corpus.jsonl");
  const counts = writeCorpus(corpus, 1200);
  // The source is a laptop's SQLite store; the target is the suite's engine (SQLite, or PostgreSQL under MEMSVC_TEST_ENGINE=postgres).
  const source = makeServices({ config: { storage: "sqlite" }, env: { MEMSVC_STORAGE: "sqlite" } });
  const target = makeServices();
  try {
    expect((await importAll(source, corpus)).memories).toBe(1200);
    const abort = new AbortController();
    let seen = 0;
    const progress: number[] = [];
    await expect(
      migrateStore(source.storage, target.storage, {
        sourceId: source.storage.location,
        batch: 100,
        signal: abort.signal,
        progress: (p) => {
          progress.push(p.memories);
          if (++seen === 5) abort.abort();
        },
      }),
    ).rejects.toThrow(/interrupted/);
    // Four batches committed before the abort, each with its cursor.
    expect(await target.storage.memories.countMemories()).toBe(400);
    expect(JSON.parse((await target.storage.memories.migrateCursor())!)).toMatchObject({ table: "memories", after: 400, complete: false });
    // Another source is refused while the target holds this migration.
    const other = makeServices({ config: { storage: "sqlite" }, env: { MEMSVC_STORAGE: "sqlite" } });
    await expect(migrateStore(other.storage, target.storage, { sourceId: other.storage.location })).rejects.toThrow(/holds a migration from/);
    await other.close();

    const r = await migrateStore(source.storage, target.storage, { sourceId: source.storage.location, batch: 100 });
    expect(r).toMatchObject({ status: "done", resumed: true });
    expect(r.copied).toMatchObject({ memories: 1200, links: counts.links, history: counts.history, anchors: counts.anchors });
    const again = await migrateStore(source.storage, target.storage, { sourceId: source.storage.location, batch: 100 });
    expect(again.status).toBe("already-done");

    const a = join(dir(), "a.jsonl");
    const b = join(dir(), "b.jsonl");
    await exportAll(source.storage, source.config.paths.identity, a, { vectors: true });
    await exportAll(target.storage, target.config.paths.identity, b, { vectors: true });
    expect(exported(b)).toBe(exported(a));
    // The re-check's columns travel too (evidence, rechecked, confirmed_at): import kept them and migrate copied them.
    const anchorLines = readFileSync(b, "utf8")
      .split("\n")
      .filter((l) => l.startsWith('{"kind":"anchor"'))
      .map((l) => JSON.parse(l));
    expect(anchorLines.filter((l) => typeof l.evidence === "string" && l.evidence.startsWith("assistant: ")).length).toBeGreaterThan(5);
    expect(anchorLines.filter((l) => typeof l.rechecked === "string").length).toBeGreaterThan(0);
    expect(anchorLines.filter((l) => typeof l.confirmed_at === "number").length).toBeGreaterThan(0);
    // The member that created each memory (issue 36) travels through import, migrate and export.
    const creators = (file: string) =>
      readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l.startsWith('{"kind":"memory"'))
        .map((l) => JSON.parse(l))
        .filter((m) => m.created_by !== null)
        .map((m) => `${m.id} ${m.created_by}`)
        .sort();
    expect(creators(b)).toEqual(creators(corpus));
    expect(creators(b).length).toBe(400);
    // seq order and values survive (the list's keyset paging and the vector index key on them).
    const seqs = (s: typeof source) => dbRows(s, "SELECT seq, id FROM memories ORDER BY seq");
    expect(await seqs(target)).toEqual(await seqs(source));
    // link_count is derived (triggers), and agrees.
    const linkCounts = (s: typeof source) => dbRows(s, "SELECT id, link_count FROM memories ORDER BY seq");
    expect(await linkCounts(target)).toEqual(await linkCounts(source));
  } finally {
    await source.close();
    await target.close();
  }
}, 120_000);

test("migrate refuses a target that holds memories it did not copy", async () => {
  const corpus = join(dir(), "corpus.jsonl");
  writeCorpus(corpus, 20);
  const source = makeServices({ config: { storage: "sqlite" }, env: { MEMSVC_STORAGE: "sqlite" } });
  const target = makeServices();
  try {
    await importAll(source, corpus);
    await importAll(target, corpus);
    await expect(migrateStore(source.storage, target.storage, { sourceId: "x" })).rejects.toThrow(/already holds 20 memories and no migrate cursor/);
  } finally {
    await source.close();
    await target.close();
  }
});
