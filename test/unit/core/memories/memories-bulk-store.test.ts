import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importAll } from "../../../../src/core/memories";
import { migrateStore } from "../../../../src/core/memories/migrate";
import type { ListFilterSpec, ListRow } from "../../../../src/core/memories/store-bulk";
import { writeCorpus } from "../../../helpers/memory-corpus";
import { sharedPgUrl } from "../../../helpers/pg-server";
import { makeServices, type TestServices } from "../../../helpers/services";
import { storedVector } from "../../../helpers/stored-vector";

// The MemoriesBulkStore contract on both engines in every run: one realistic
// store on SQLite, copied to PostgreSQL (PGlite over TCP) by migrate, then
// every bulk read and write asked of both must answer the same. (The
// environment, not config.json, pins the SQLite side: under
// MEMSVC_TEST_ENGINE=postgres the suite's environment would override it.)
let lite: TestServices;
let pg: TestServices;
beforeAll(async () => {
  const corpus = join(mkdtempSync(join(tmpdir(), "memsvc-bulk-")), "corpus.jsonl");
  writeCorpus(corpus, 400, 23);
  lite = makeServices({ config: { storage: "sqlite" }, env: { MEMSVC_STORAGE: "sqlite" } });
  await importAll(lite, corpus);
  pg = makeServices({
    config: { storage: "postgres", database_url: await sharedPgUrl(), database_schema: `bulk_${process.pid}_${Math.random().toString(36).slice(2, 8)}` },
  });
  await migrateStore(lite.storage, pg.storage, { sourceId: "test" });
}, 120_000);
afterAll(async () => {
  await lite?.close();
  await pg?.close();
});

const NOW = Date.UTC(2025, 3, 1);
const none: ListFilterSpec = { project: null, type: null, domain: null, from: null, to: null, minStrength: null, usage: null, ids: null };
const FILTERS: ListFilterSpec[] = [
  none,
  { ...none, project: "billing" },
  { ...none, type: "decisions", domain: "general" },
  { ...none, domain: "ops", from: Date.UTC(2025, 0, 3), to: Date.UTC(2025, 0, 12), usage: "never" },
  { ...none, minStrength: 0.8, usage: "used" },
  { ...none, project: "infra", minStrength: 0.3, usage: "shown" },
  // The review filter's id set (core finds the marked ids): none marked selects nothing.
  { ...none, ids: [] },
];
// The decay formula runs in each database's floating point: equal to far more digits than the list shows.
const rounded = (rows: ListRow[]) => rows.map((r) => ({ ...r, effectiveStrength: Math.round(r.effectiveStrength * 1e9) / 1e9 }));
const bySeq = <T extends { seq: number }>(rows: T[]) => [...rows].sort((a, b) => a.seq - b.seq);

test("list pages, counts, id filters, rows and facets are the same on both engines", async () => {
  const some = (await lite.storage.memories.listPage(none, { sort: "newest", after: null, limit: 400, now: NOW, previewChars: 10 }))
    .filter((_, i) => i % 7 === 0)
    .map((r) => r.id);
  const marked: ListFilterSpec[] = [
    { ...none, ids: [...some, "00000000-0000-0000-0000-000000000000"] },
    { ...none, ids: some, project: "infra" },
  ];
  expect(await lite.storage.memories.countSelected(marked[0], NOW)).toBe(some.length);
  for (const f of [...FILTERS, ...marked]) {
    const count = await lite.storage.memories.countSelected(f, NOW);
    expect({ f, n: await pg.storage.memories.countSelected(f, NOW) }).toEqual({ f, n: count });
    for (const sort of ["newest", "importance"] as const) {
      let after: { key: number; seq: number } | null = null;
      let seen = 0;
      for (let page = 0; page < 40; page++) {
        const req = { sort, after, limit: 25, now: NOW, previewChars: 60 };
        const a = await lite.storage.memories.listPage(f, req);
        expect(rounded(await pg.storage.memories.listPage(f, req))).toEqual(rounded(a));
        seen += a.length;
        if (a.length < 25) break;
        const last = a[a.length - 1];
        after = { key: sort === "newest" ? last.createdAt : last.strength, seq: last.seq };
      }
      expect(seen).toBe(count);
    }
    const ids = (await lite.storage.memories.listPage(none, { sort: "newest", after: null, limit: 120, now: NOW, previewChars: 10 })).map((r) => r.id);
    expect(bySeq(await pg.storage.memories.filterIds(ids, f, NOW))).toEqual(bySeq(await lite.storage.memories.filterIds(ids, f, NOW)));
  }
  expect(await pg.storage.memories.facets()).toEqual(await lite.storage.memories.facets());
  expect(rounded(bySeq(await pg.storage.memories.listRows([1, 7, 250, 9999], NOW, 30)))).toEqual(
    rounded(bySeq(await lite.storage.memories.listRows([1, 7, 250, 9999], NOW, 30))),
  );
  expect(await pg.storage.memories.countMemories(390)).toBe(10);
});

test("bulk delete checks the count inside its transaction, then removes the same rows and counts the same links", async () => {
  const f: ListFilterSpec = { ...none, project: "checkout" };
  const n = await lite.storage.memories.countSelected(f, NOW);
  expect(n).toBeGreaterThan(10);
  for (const s of [lite, pg]) {
    expect(await s.storage.memories.deleteSelected(f, NOW, null, n + 1)).toEqual({ count: n });
    expect(await s.storage.memories.countSelected(f, NOW)).toBe(n);
  }
  const a = (await lite.storage.memories.deleteSelected(f, NOW, null, n)) as { deleted: { seq: number }[]; linksRemoved: number };
  const b = (await pg.storage.memories.deleteSelected(f, NOW, null, n)) as { deleted: { seq: number }[]; linksRemoved: number };
  expect(b.linksRemoved).toBe(a.linksRemoved);
  expect(bySeq(b.deleted)).toEqual(bySeq(a.deleted));
  expect(await pg.storage.memories.countMemories()).toBe(await lite.storage.memories.countMemories());
  // Restricted to given seqs (a query's matches): only those that pass the filters count.
  const only = [2, 3, 4];
  const c = await lite.storage.memories.countSelected(none, NOW);
  expect(await pg.storage.memories.deleteSelected(none, NOW, only, 99)).toEqual(await lite.storage.memories.deleteSelected(none, NOW, only, 99));
  expect(await pg.storage.memories.deleteSelected(none, NOW, [], 0)).toEqual({ deleted: [], linksRemoved: 0 });
  expect(await pg.storage.memories.countSelected(none, NOW)).toBe(c);
});

test("re-embed batches land only while the cursor and embedder are what the batch started from", async () => {
  for (const s of [lite, pg]) {
    const { embedderId } = await s.storage.memories.embedderState();
    expect(embedderId).toBe("fallback:hash-v1");
    await s.storage.meta.set("reembed_cursor", "0");
    const rows = await s.storage.memories.reembedRows(0, 4);
    expect(rows.map((r) => r.seq)).toEqual((await lite.storage.memories.reembedRows(0, 4)).map((r) => r.seq));
    const v = new Float32Array(384).fill(0.05);
    const batch = rows.map((r) => ({ seq: r.seq, vector: v }));
    const last = String(rows[rows.length - 1].seq);
    expect(await s.storage.memories.applyReembed({ cursor: "7", embedderId: embedderId! }, batch, last)).toBe(false);
    expect(await s.storage.memories.applyReembed({ cursor: "0", embedderId: "other:v1" }, batch, last)).toBe(false);
    expect((await storedVector(s, rows[0].seq))![0]).not.toBeCloseTo(0.05, 6);
    expect(await s.storage.memories.applyReembed({ cursor: "0", embedderId: embedderId! }, batch, last)).toBe(true);
    expect((await s.storage.memories.embedderState()).reembedCursor).toBe(last);
    expect((await storedVector(s, rows[0].seq))![0]).toBeCloseTo(0.05, 6);
    expect(await s.storage.memories.finishReembed({ cursor: "0", embedderId: embedderId! })).toBe(false);
    expect(await s.storage.memories.finishReembed({ cursor: last, embedderId: embedderId! })).toBe(true);
    expect((await s.storage.memories.embedderState()).reembedCursor).toBeNull();
    expect(await s.storage.memories.seqsBetween(1, 6)).toEqual(await lite.storage.memories.seqsBetween(1, 6));
  }
});

test("import refuses a store that holds memories, on both engines, and writes nothing", async () => {
  for (const s of [lite, pg]) {
    const before = await s.storage.memories.countMemories();
    await expect(
      s.storage.memories.importRows({ memories: [], links: [], segments: [], events: [], history: [], anchors: [] }, "fallback:hash-v1"),
    ).rejects.toThrow(/already holds memories/);
    expect(await s.storage.memories.countMemories()).toBe(before);
  }
});
