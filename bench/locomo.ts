/**
 * Retrieval quality on the LoCoMo development split (`bun run bench:locomo`).
 * Every turn of a conversation is stored as a memory of its project; each
 * question of categories 1-4 is searched within its project; recall@k is the
 * share of its evidence turns found in the top k. Compares the hybrid search
 * with a plain FTS5 BM25 floor and with the vector retriever alone.
 *
 * Env: MEMSVC_LOCOMO_DIR (data folder; default ../shared/data/locomo-dev next
 * to the project), MEMSVC_LOCOMO_MODEL_DIR (a folder holding the ONNX model
 * files, to measure the real embedder), MEMSVC_LOCOMO_MODEL (its model id).
 * Without a model folder the developer's own home (MEMSVC_HOME or ~/.memsvc)
 * is looked into; else the offline fallback embedder is measured.
 * MEMSVC_STORAGE=postgres, MEMSVC_DATABASE_URL and MEMSVC_DATABASE_SCHEMA (a
 * schema of its own: the run adds the dataset to it) measure the PostgreSQL
 * engine's search instead; the FTS5 floor is SQLite's and is left out there.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { DEFAULT_EMBED_MODEL, homeDir, loadConfig } from "../src/config";
import { parseSessionDate } from "../src/core/dates";
import { silentLogger } from "../src/core/log";
import type { NewMemory } from "../src/core/memories";
import { insertMemoryRows } from "../src/core/ingest";
import { queryVector, rank } from "../src/core/search";
import { ftsExpression } from "../src/store/sqlite/search-fts";
import { thresholds } from "../src/core/search";
import type { Services } from "../src/core/services";
import { benchServices } from "./lib/services";
import type { Store } from "../src/store/sqlite/open";
import { withStorage } from "../src/core/storage";
import { GRAPH_HOP_DIRECT_FACTOR, GRAPH_HOP_FACTOR, RRF_K, SEARCH_CANDIDATES, VECTOR_RRF_WEIGHT } from "../src/core/search/tuning";
import { loadEmbedder, type Embedder } from "../src/embed";
import { VERSION } from "../src/version";
import { KS, loadLocomo, locomoDir, RecallScorer, SCORED_CATEGORIES, type LocomoMemory, type LocomoQuery } from "./lib/locomo-data";

const EMBED_BATCH = 32;
const K = Math.max(...KS);
const log = (line: string) => process.stderr.write(`[locomo] ${line}\n`);

/** The model from MEMSVC_LOCOMO_MODEL_DIR (linked into a temp home), the developer's home, or the fallback. */
async function embedderFor(tmp: string): Promise<Embedder> {
  const model = process.env.MEMSVC_LOCOMO_MODEL || DEFAULT_EMBED_MODEL;
  let home = homeDir(process.env);
  const dir = process.env.MEMSVC_LOCOMO_MODEL_DIR;
  if (dir) {
    home = join(tmp, "model-home");
    const target = join(home, "models", model);
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(resolve(dir), target, "dir");
  }
  return loadEmbedder({ home, model, offline: true, log: (line) => log(line) });
}

/** Stores every turn, one at a time as /ingest would (each links to its nearest earlier turns); returns memory id -> key. */
async function ingest(s: Services, memories: LocomoMemory[]): Promise<{ keyOf: Map<string, string>; keyBySeq: Map<number, string> }> {
  const keyOf = new Map<string, string>();
  const keyBySeq = new Map<number, string>();
  for (let i = 0; i < memories.length; i += EMBED_BATCH) {
    const batch = memories.slice(i, i + EMBED_BATCH);
    const vectors = await s.embedder.embed(
      batch.map((m) => m.content),
      "document",
    );
    await s.storage.transaction(async (tx) => {
      for (const [j, m] of batch.entries()) {
        const item: NewMemory = {
          content: m.content,
          memoryType: "experience",
          project: m.project,
          sourceAgent: "locomo",
          createdAt: parseSessionDate(m.session_date),
        };
        const [row] = await insertMemoryRows(withStorage(s, tx), [item], [vectors[j]]);
        // Visible to the next turn's nearest-neighbour links, as after an /ingest commit.
        s.index.upsert(row.seq, vectors[j], m.project);
        keyOf.set(row.id, m.key);
        keyBySeq.set(row.seq, m.key);
      }
    });
  }
  return { keyOf, keyBySeq };
}

interface Retrievers {
  hybrid: RecallScorer;
  bm25: RecallScorer;
  vector: RecallScorer;
}

async function evaluate(
  s: Services & { sqlite: Store | null },
  queries: LocomoQuery[],
  keys: { keyOf: Map<string, string>; keyBySeq: Map<number, string> },
): Promise<Retrievers> {
  const { keyOf, keyBySeq } = keys;
  const out: Retrievers = { hybrid: new RecallScorer(), bm25: new RecallScorer(), vector: new RecallScorer() };
  // The FTS5 floor is SQLite's own; on PostgreSQL it is left out (storage "postgres": the hybrid and vector rows only).
  const bm25 = s.sqlite?.sqlite.query<{ seq: number }, [string, string, number]>(
    "SELECT f.rowid AS seq FROM memories_fts f JOIN memories m ON m.seq = f.rowid WHERE memories_fts MATCH ? AND m.project = ? ORDER BY bm25(memories_fts) LIMIT ?",
  );
  for (let i = 0; i < queries.length; i += EMBED_BATCH) {
    const batch = queries.slice(i, i + EMBED_BATCH);
    // As /search embeds them: the fallback weighs the query's words by their IDF in the store (queryVector).
    const vectors = s.embedder.embedWeighted
      ? await Promise.all(batch.map((q) => queryVector(s, q.question.trim())))
      : await s.embedder.embed(
          batch.map((q) => q.question),
          "query",
        );
    for (const [j, q] of batch.entries()) {
      const hits = (await rank(s, q.question.trim(), vectors[j], K, q.project)).results;
      out.hybrid.add(
        q,
        hits.map((h) => keyOf.get(h.id)!),
      );
      // The floor: question words (stop words removed) OR-ed, FTS5 porter BM25, nothing else.
      const expr = ftsExpression(q.question);
      if (bm25) out.bm25.add(q, expr ? bm25.all(expr, q.project, K).map((r) => keyBySeq.get(r.seq)!) : []);
      out.vector.add(
        q,
        (await s.storage.search.nearest(vectors[j], Math.max(K, SEARCH_CANDIDATES), q.project)).slice(0, K).map((h) => keyBySeq.get(h.seq)!),
      );
    }
  }
  return out;
}

async function main(): Promise<void> {
  const dir = locomoDir();
  const data = loadLocomo(dir);
  if ("missing" in data) {
    console.log(JSON.stringify({ bench: "locomo", skipped: true, reason: `LoCoMo data not found: ${data.missing} (set MEMSVC_LOCOMO_DIR)` }));
    return;
  }
  const started = performance.now();
  const tmp = mkdtempSync(join(tmpdir(), "memsvc-locomo-"));
  try {
    writeFileSync(join(tmp, "config.json"), JSON.stringify({ token: "locomo-bench" }));
    const embedder = await embedderFor(tmp);
    // MEMSVC_STORAGE=postgres with MEMSVC_DATABASE_URL (and MEMSVC_DATABASE_SCHEMA, a fresh one) measures the team engine.
    const pass = ["MEMSVC_STORAGE", "MEMSVC_DATABASE_URL", "MEMSVC_DATABASE_SCHEMA"].filter((k) => process.env[k]);
    const config = loadConfig({ MEMSVC_HOME: tmp, MEMSVC_OFFLINE: "1", ...Object.fromEntries(pass.map((k) => [k, process.env[k]])) });
    const s = benchServices(config, { embedder, log: silentLogger });
    try {
      const t0 = performance.now();
      const keys = await ingest(s, data.memories);
      const ingestSeconds = (performance.now() - t0) / 1000;
      const scored = data.queries.filter((q) => SCORED_CATEGORIES.includes(q.category));
      const t1 = performance.now();
      const r = await evaluate(s, scored, keys);
      const hybrid = r.hybrid.figures();
      const floor = s.sqlite ? r.bm25.figures() : null;
      const links = s.sqlite ? s.sqlite.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM links").get()!.n : null;
      const beats = floor ? KS.every((k) => hybrid[`recall_at_${k}`].overall > floor[`recall_at_${k}`].overall) : null;
      console.log(
        JSON.stringify(
          {
            bench: "locomo",
            version: VERSION,
            date: new Date().toISOString(),
            embedder: { id: embedder.id, kind: embedder.kind, description: embedder.description },
            tuning: {
              RRF_K,
              SEARCH_CANDIDATES,
              VECTOR_RRF_WEIGHT: VECTOR_RRF_WEIGHT[embedder.kind],
              VECTOR_MIN_SIMILARITY: thresholds(s).vectorMin,
              thresholds: thresholds(s),
              GRAPH_HOP_FACTOR,
              GRAPH_HOP_DIRECT_FACTOR,
            },
            data: {
              dir,
              conversations: new Set(data.memories.map((m) => m.project)).size,
              memories: data.memories.length,
              queries_scored: scored.length,
              queries_skipped_category_5: data.queries.length - scored.length,
              similarity_links: links,
            },
            hybrid,
            storage: config.storage,
            bm25_floor: floor && { ...floor, method: "FTS5 porter bm25, question keywords (stop words removed) OR-ed, within the project" },
            vector_only: r.vector.figures(),
            beats_bm25_floor: beats,
            seconds: { ingest: round1(ingestSeconds), search: round1((performance.now() - t1) / 1000), total: round1((performance.now() - started) / 1000) },
          },
          null,
          2,
        ),
      );
    } finally {
      await s.close();
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const round1 = (x: number) => Math.round(x * 10) / 10;

await main();
