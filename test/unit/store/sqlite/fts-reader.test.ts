import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../../../src/config";
import type { Level } from "../../../../src/core/log";
import { ingestMemory } from "../../../../src/core/ingest";
import { search } from "../../../../src/core/search";
import { fullTextNow } from "../../../../src/core/search/search";
import { createServices, type Services } from "../../../../src/core/services";
import { FallbackEmbedder } from "../../../../src/embed/fallback";
import { FtsReaderUnavailable, startFtsReader, type FtsReader } from "../../../../src/store/sqlite/fts-reader";
import { openStore, type Store } from "../../../../src/store/sqlite/open";
import { openStorage } from "../../../../src/store/open";
import { BM25_SQL } from "../../../../src/store/sqlite/search-fts";

// The full-text reader worker (src/store/sqlite/fts-reader.ts) on real SQLite
// files: the same rows as the main connection, what is committed at once, a
// transaction's own rows on its connection, and every way the worker can be
// missing. SQLite only (see test/postgres-skip.txt).

const open: (Services & { store: Store })[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

function services(ftsReader = true) {
  const home = mkdtempSync(join(tmpdir(), "memsvc-fts-reader-"));
  writeFileSync(join(home, "config.json"), JSON.stringify({ token: "t".repeat(32), storage: "sqlite" }));
  const logs: { level: Level; message: string }[] = [];
  const config = loadConfig({ MEMSVC_HOME: home, MEMSVC_OFFLINE: "1", MEMSVC_STORAGE: "sqlite" });
  const log = (level: Level, message: string) => logs.push({ level, message });
  let store: Store | null = null;
  const storage = openStorage(config, { ftsReader: ftsReader ? log : undefined, sqliteHandle: (h) => (store = h) });
  const s = Object.assign(createServices(config, storage, { embedder: new FallbackEmbedder(), log }), { store: store! as Store });
  open.push(s);
  return { s, logs };
}

/** Waits (in small sleeps, bounded by a count, not a clock) until `ok()` or gives up. */
async function until(ok: () => boolean, tries = 1000): Promise<void> {
  for (let i = 0; i < tries && !ok(); i++) await Bun.sleep(5);
}

/** Counts the queries the worker was asked (and answered: the promise it gave settled). */
function spy(reader: FtsReader) {
  const counts = { asked: 0, answered: 0 };
  const query = reader.query.bind(reader);
  (reader as { query: FtsReader["query"] }).query = (expr, project, k) => {
    const p = query(expr, project, k);
    if (p) {
      counts.asked++;
      p.then(
        () => counts.answered++,
        () => {},
      );
    }
    return p;
  };
  return counts;
}

const PROJECTS = ["atlas", "borealis", "cobalt"];
const TOPICS = [
  "postgres migration lock timeout",
  "webpack build cache invalidation",
  "redis cluster failover drill",
  "jest flaky snapshot update",
  "docker compose healthcheck port",
];

async function seed(s: Services, n: number) {
  for (let i = 0; i < n; i++) {
    const topic = TOPICS[i % TOPICS.length];
    await ingestMemory(s, {
      content: `Note ${i}: the ${topic} needed care; memory ${i} of the ${PROJECTS[i % 3]} team, step ${i % 7}.`,
      project: PROJECTS[i % 3],
      source_agent: "test",
    });
  }
}

describe("the full-text reader worker", () => {
  test("answers search's full-text queries with the main connection's rows, with and without a project", async () => {
    const { s } = services();
    const reader = s.store.ftsReader!;
    expect(reader).not.toBeNull();
    await until(() => reader.mode === "worker");
    expect(reader.mode).toBe("worker");
    await seed(s, 90);
    const counts = spy(reader);
    const queries = [["postgres", "lock"], ["webpack", "cache"], ["failover"], ["flaky", "snapshot", "update"], ["note", "care"], ["nothing-matches-this"]];
    for (const terms of queries) {
      for (const project of [null, "atlas", "cobalt", "no-such-project"]) {
        const viaWorker = await s.storage.search.fullText(terms, project, 20);
        expect(viaWorker).toEqual(fullTextNow(s, terms, project, 20));
        const every = await s.storage.search.fullText(terms, project, 20, { every: true });
        expect(every).toEqual(fullTextNow(s, terms, project, 20, { every: true }));
      }
    }
    // Every query with words went to the worker (the unmatched one too: it has an expression).
    expect(counts.asked).toBe(queries.length * 4 * 2);
    expect(counts.answered).toBe(counts.asked);
    // And search as a whole ranks the same rows either way.
    const hits = await search(s, { query: "postgres migration lock", limit: 5 });
    expect(hits.results.length).toBeGreaterThan(0);
    expect(hits.results.every((r) => r.content.includes("postgres migration lock"))).toBe(true);
  });

  test("sees a memory as soon as its ingest has answered", async () => {
    const { s } = services();
    const reader = s.store.ftsReader!;
    await until(() => reader.mode === "worker");
    await seed(s, 10);
    const counts = spy(reader);
    const { id } = await ingestMemory(s, { content: "The zyxwvut deploy key rotates every Tuesday.", project: "atlas", source_agent: "test" });
    const seqs = await s.storage.search.fullText(["zyxwvut"], null, 10);
    expect(counts.answered).toBe(1);
    expect(seqs).toHaveLength(1);
    const rows = await s.storage.memories.memoriesBySeq(seqs);
    expect(rows[0].id).toBe(id!);
  });

  test("a transaction's reads stay on its own connection and see its writes", async () => {
    const { s } = services();
    const reader = s.store.ftsReader!;
    await until(() => reader.mode === "worker");
    const counts = spy(reader);
    const seen = await s.storage.transaction(async (tx) => {
      await tx.memories.insertMemories([
        {
          id: crypto.randomUUID(),
          content: "An uncommitted qwertyuiop memory.",
          memoryType: "experience",
          project: null,
          sourceAgent: "test",
          sourceAgentId: null,
          sourceDomain: null,
          sourceSession: null,
          privacy: "WORK",
          createdAt: Date.now(),
          updatedAt: Date.now(),
          refreshedAt: Date.now(),
          strength: 1,
          vector: new Float32Array(384).fill(0.05),
          tags: [],
        },
      ]);
      return { inside: await tx.search.fullText(["qwertyuiop"], null, 10) };
    });
    expect(seen.inside).toHaveLength(1);
    expect(counts.asked).toBe(0);
    // Committed now: the worker finds it too.
    expect(await s.storage.search.fullText(["qwertyuiop"], null, 10)).toHaveLength(1);
    expect(counts.answered).toBe(1);
  });

  test("a worker that dies mid-query hands its queries to the main connection, for good", async () => {
    const { s, logs } = services();
    const reader = s.store.ftsReader!;
    await until(() => reader.mode === "worker");
    await seed(s, 30);
    const expected = fullTextNow(s, ["redis", "failover"], null, 20);
    expect(expected.length).toBeGreaterThan(0);
    const pending = s.storage.search.fullText(["redis", "failover"], null, 20);
    reader.kill();
    expect(await pending).toEqual(expected);
    await until(() => reader.mode === "off");
    expect(reader.mode).toBe("off");
    expect(reader.query('"redis"', null, 5)).toBeNull();
    expect(await s.storage.search.fullText(["redis", "failover"], null, 20)).toEqual(expected);
    expect(logs.some((l) => l.level === "error" && l.message.includes("full-text reader"))).toBe(true);
  });

  test("refuses a SQLite library other than the main thread's, and the main connection answers", async () => {
    const { s } = services(false);
    expect(s.store.ftsReader).toBeNull();
    const logs: { level: Level; message: string }[] = [];
    const reader = startFtsReader(s.store.sqlite, s.store.file, BM25_SQL, {
      log: (level, message) => logs.push({ level, message }),
      library: { version: "3.0.0", sourceId: "not this one" },
    });
    await until(() => reader.mode === "off");
    expect(reader.mode).toBe("off");
    expect(reader.query('"x"', null, 5)).toBeNull();
    expect(logs.find((l) => l.level === "warn")?.message).toContain("did not start");
    reader.stop();
  });

  test("a query the worker cannot run rejects as unavailable (the caller runs it itself)", async () => {
    const { s } = services(false);
    const reader = startFtsReader(s.store.sqlite, s.store.file, BM25_SQL, { log: () => {} });
    await until(() => reader.mode !== "starting");
    expect(reader.mode).toBe("worker");
    // Not quoted: FTS5 syntax, which search never sends.
    const bad = reader.query("AND OR (", null, 5)!;
    expect(bad).not.toBeNull();
    await expect(bad).rejects.toBeInstanceOf(FtsReaderUnavailable);
    // One bad query does not end the worker.
    expect(reader.mode).toBe("worker");
    expect(await reader.query('"anything"', null, 5)).toEqual([]);
    reader.stop();
    expect(reader.mode).toBe("off");
  });

  test("a store opened without it (tests, the CLI) and :memory: have none", async () => {
    const { s } = services(false);
    expect(s.store.ftsReader).toBeNull();
    const memory = openStore(":memory:", { ftsReader: { log: () => {} } });
    expect(memory.ftsReader).toBeNull();
    memory.close();
  });
});
