/**
 * Recall-index benchmark (`bun bench/recall.ts`). Prints one JSON object
 * (also written to bench/results/):
 *
 * - latency: p50/p95 of the recall-index path (recallWithVector: session
 *   state, retrieval, gates, marking shown; the embedding excluded) on a
 *   store seeded straight into SQLite to 10k and then 100k memories; the query
 *   embedding is excluded and timed separately for the active embedder.
 * - relevance: on the LoCoMo dev split (../shared/data/locomo-dev, never
 *   copied into the repo), the share of related questions that get a block
 *   (and a block holding an evidence turn), next to the share of ~100
 *   unrelated coding/devops prompts that get one (target < 10%). Skipped with
 *   a message when the data is absent.
 * - budget: the same related questions with the token budget applied
 *   (recall.maxTokens, default and tighter ones): the evidence-block rate
 *   before and after, and every block counted by the tokenizer against its
 *   budget (`exceeded` must stay 0).
 *
 * Env: BENCH_SIZES (default "10000,100000"), BENCH_PROMPTS (default 400),
 * LOCOMO_DIR (default ../shared/data/locomo-dev).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadConfig, pathsFor } from "../src/config";
import { silentLogger } from "../src/core/log";
import { insertMemoryRows } from "../src/core/ingest";
import { recallWithVector } from "../src/core/recall";
import { ensureCalibration } from "../src/core/search";
import { recallCandidates, renderIndex, withinBudget } from "../src/core/recall";
import { DEFAULT_RECALL_MAX_TOKENS } from "../src/config";
import { countTokens, warmTokenizer } from "../src/core/tokenizer";
import { promptTerms } from "../src/core/recall";
import { blendTopic, nextTopic, type SessionTopic } from "../src/core/recall";
import type { Services } from "../src/core/services";
import { benchServices } from "./lib/services";
import { withStorage } from "../src/core/storage";
import { FallbackEmbedder, loadEmbedder, type Embedder } from "../src/embed";
import { hashEmbed } from "../src/embed/fallback";
import { NoteGenerator } from "./lib/corpus";
import { seedStore } from "./lib/seed";
import { round, summarize } from "./lib/stats";
import { UNRELATED_PROMPTS } from "./unrelated-prompts";

const ROOT = resolve(import.meta.dir, "..");
const SIZES = (process.env.BENCH_SIZES ?? "10000,100000").split(",").map(Number);
const PROMPTS = Number(process.env.BENCH_PROMPTS ?? 400);
const LOCOMO = resolve(process.env.LOCOMO_DIR ?? join(ROOT, "../shared/data/locomo-dev"));
const TARGET = { p95_ms: 20, unrelated_block_rate: 0.1 };
const log = (line: string) => process.stderr.write(`[bench:recall] ${line}\n`);

function open(home: string, embedder: Embedder): Services {
  return benchServices(loadConfig({ MEMSVC_HOME: home, MEMSVC_OFFLINE: "1" }), { embedder, log: silentLogger });
}

/** Synthetic engineering prompts (related to the seeded notes) and the unrelated set, vectors precomputed. */
function latencyPrompts(): { prompt: string; project: string | null; vector: Float32Array }[] {
  const gen = new NoteGenerator(7);
  const out = [];
  for (let i = 0; i < PROMPTS; i++) {
    const q = i % 4 === 3 ? { query: UNRELATED_PROMPTS[i % UNRELATED_PROMPTS.length], project: null } : gen.query();
    out.push({ prompt: q.query, project: q.project, vector: hashEmbed(q.query) });
  }
  return out;
}

async function latency(): Promise<Record<string, unknown>[]> {
  const home = mkdtempSync(join(tmpdir(), "memsvc-bench-recall-"));
  const gen = new NoteGenerator(42);
  const prompts = latencyPrompts();
  const results: Record<string, unknown>[] = [];
  try {
    let total = 0;
    for (const size of SIZES) {
      log(`seeding to ${size} memories`);
      seedStore(pathsFor(home).db, gen, size - total);
      total = size;
      const s = open(home, new FallbackEmbedder());
      // Above INDEX_BACKGROUND_ABOVE the index loads in the background: timing before it is ready
      // measured BM25-only recall (and, before word weights counted the store, a block rate of 0).
      await s.indexState.ready;
      // Warm the page cache and the JIT, in throwaway sessions.
      for (const [i, p] of prompts.slice(0, 40).entries())
        await recallWithVector(s, { sessionId: `warm-${i}`, prompt: p.prompt, project: p.project }, p.vector);
      const samples: number[] = [];
      let blocks = 0;
      let lines = 0;
      for (const [i, p] of prompts.entries()) {
        // Sessions of 20 prompts, so suppression and state rows are exercised as in use.
        const t = performance.now();
        const r = await recallWithVector(s, { sessionId: `bench-${size}-${Math.floor(i / 20)}`, prompt: p.prompt, project: p.project }, p.vector);
        samples.push(performance.now() - t);
        if (r.block) blocks++;
        lines += r.shown.length;
      }
      const lat = summarize(samples);
      results.push({
        memories: size,
        prompts: prompts.length,
        latency_ms: lat,
        meets_p95_target: lat.p95 < TARGET.p95_ms,
        block_rate: round(blocks / prompts.length, 3),
        mean_lines: round(lines / prompts.length, 2),
      });
      await s.close();
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  return results;
}

async function embeddingTime(embedder: Embedder): Promise<Record<string, unknown>> {
  const prompts = [...UNRELATED_PROMPTS];
  for (const p of prompts.slice(0, 10)) await embedder.embed([p], "query");
  const samples: number[] = [];
  for (const p of prompts) {
    const t = performance.now();
    await embedder.embed([p], "query");
    samples.push(performance.now() - t);
  }
  return { embedder: embedder.id, kind: embedder.kind, latency_ms: summarize(samples, 3) };
}

interface LocomoMemory {
  key: string;
  content: string;
  session_date: string;
  project: string;
}
interface LocomoQuery {
  question: string;
  project: string;
  evidence: string[];
  category: number;
}

async function relevance(embedder: Embedder): Promise<Record<string, unknown>> {
  if (!existsSync(join(LOCOMO, "memories.json")) || !existsSync(join(LOCOMO, "queries.json"))) {
    return { skipped: `no LoCoMo data at ${LOCOMO} (memories.json, queries.json): relevance figures not measured` };
  }
  const memories = JSON.parse(readFileSync(join(LOCOMO, "memories.json"), "utf8")) as LocomoMemory[];
  const queries = JSON.parse(readFileSync(join(LOCOMO, "queries.json"), "utf8")) as LocomoQuery[];
  const home = mkdtempSync(join(tmpdir(), "memsvc-bench-locomo-"));
  const s = open(home, embedder);
  try {
    log(`ingesting ${memories.length} LoCoMo turns with ${embedder.id}`);
    const keyOf = new Map<string, string>();
    for (let i = 0; i < memories.length; i += 200) {
      const batch = memories.slice(i, i + 200);
      const vectors = await embedder.embed(
        batch.map((m) => m.content),
        "document",
      );
      const rows = await s.storage.transaction((tx) =>
        insertMemoryRows(
          withStorage(s, tx),
          batch.map((m) => ({
            content: m.content,
            memoryType: "experience" as const,
            project: m.project,
            sourceAgent: "locomo",
            createdAt: Date.parse(m.session_date),
          })),
          vectors,
        ),
      );
      rows.forEach((r, j) => {
        keyOf.set(r.id, `${batch[j].project}#${batch[j].key}`);
        s.index.upsert(r.seq, vectors[j], batch[j].project);
      });
    }
    // As the server does at start: measure the store's similarity spread for the thresholds.
    const calibrated = await ensureCalibration(s);
    const none = new Set<string>();
    const byCategory: Record<string, { questions: number; block: number; evidence: number }> = {};
    let lines = 0;
    // The budget: each block as the default and tighter budgets cut it, counted by the tokenizer.
    await warmTokenizer();
    const BUDGETS = [DEFAULT_RECALL_MAX_TOKENS, 250, 150];
    const budget = Object.fromEntries(BUDGETS.map((b) => [b, { blocks: 0, evidence: 0, cut_lines: 0, exceeded: 0, max_tokens: 0, tokens: 0 }]));
    let unbudgetedTokensMax = 0;
    let answerableQuestions = 0;
    let answerableEvidence = 0;
    for (const q of queries) {
      const [vector] = await embedder.embed([q.question], "query");
      const picks = await recallCandidates(s, q.question, vector, q.project, none);
      const c = (byCategory[q.category] ??= { questions: 0, block: 0, evidence: 0 });
      c.questions++;
      if (picks.length) c.block++;
      lines += picks.length;
      const evidence = new Set(q.evidence.map((e) => `${q.project}#${e}`));
      if (picks.some((p) => evidence.has(keyOf.get(p.id)!))) c.evidence++;
      if (q.category === 5 || picks.length === 0) continue;
      answerableQuestions++;
      if (picks.some((p) => evidence.has(keyOf.get(p.id)!))) answerableEvidence++;
      const all = withinBudget(picks, q.project, Number.MAX_SAFE_INTEGER);
      unbudgetedTokensMax = Math.max(unbudgetedTokensMax, await countTokens(renderIndex(picks, all.texts)!));
      for (const b of BUDGETS) {
        const { fit, cut, texts } = withinBudget(picks, q.project, b);
        const block = renderIndex(fit, texts);
        const f = budget[b];
        f.cut_lines += cut.length;
        if (!block) continue;
        const n = await countTokens(block);
        f.blocks++;
        f.tokens += n;
        f.max_tokens = Math.max(f.max_tokens, n);
        if (n > b) f.exceeded++;
        if (fit.some((p) => evidence.has(keyOf.get(p.id)!))) f.evidence++;
      }
    }
    const budgetFigures = {
      questions_with_a_block: answerableQuestions,
      unbudgeted: { evidence_blocks: answerableEvidence, max_tokens: unbudgetedTokensMax },
      by_budget: Object.fromEntries(
        BUDGETS.map((b) => {
          const f = budget[b];
          return [
            b,
            {
              blocks: f.blocks,
              evidence_blocks: f.evidence,
              evidence_kept: round(f.evidence / Math.max(1, answerableEvidence), 3),
              lines_cut: f.cut_lines,
              mean_tokens: round(f.tokens / Math.max(1, f.blocks), 1),
              max_tokens: f.max_tokens,
              exceeded: f.exceeded,
            },
          ];
        }),
      ),
      note: "categories 1-4 with a block; evidence_kept: blocks still holding an evidence turn after the cut, of those before it; exceeded: blocks over their budget by the tokenizer's count (must be 0)",
    };
    // The same questions asked in order as one session per conversation, the running topic
    // carried from question to question (no suppression): LoCoMo's questions jump between
    // topics, so this shows whether the topic drowns a change of subject.
    const topics = new Map<string, SessionTopic>();
    let sessionBlocks = 0;
    let sessionEvidence = 0;
    let sessionQuestions = 0;
    for (const q of queries) {
      if (q.category === 5) continue;
      const [vector] = await embedder.embed([q.question], "query");
      const terms = await promptTerms(s, q.question);
      const blend = blendTopic(s, topics.get(q.project) ?? null, vector, terms);
      const picks = await recallCandidates(s, q.question, vector, q.project, none, blend);
      topics.set(q.project, nextTopic(blend, vector, terms));
      sessionQuestions++;
      if (picks.length) sessionBlocks++;
      const evidence = new Set(q.evidence.map((e) => `${q.project}#${e}`));
      if (picks.some((p) => evidence.has(keyOf.get(p.id)!))) sessionEvidence++;
    }
    // Unrelated prompts asked inside each of those sessions, with its final topic.
    let topicUnrelatedBlocks = 0;
    let topicUnrelatedRuns = 0;
    for (const [project, topic] of topics) {
      for (const prompt of UNRELATED_PROMPTS) {
        const [vector] = await embedder.embed([prompt], "query");
        const blend = blendTopic(s, topic, vector, await promptTerms(s, prompt));
        topicUnrelatedRuns++;
        if ((await recallCandidates(s, prompt, vector, project, none, blend)).length) topicUnrelatedBlocks++;
      }
    }
    const projects = [...new Set(memories.map((m) => m.project)), null];
    let unrelatedBlocks = 0;
    let unrelatedRuns = 0;
    for (const prompt of UNRELATED_PROMPTS) {
      const [vector] = await embedder.embed([prompt], "query");
      for (const project of projects) {
        unrelatedRuns++;
        if ((await recallCandidates(s, prompt, vector, project, none)).length) unrelatedBlocks++;
      }
    }
    const answerable = Object.entries(byCategory).filter(([cat]) => cat !== "5");
    const sum = (f: (c: { questions: number; block: number; evidence: number }) => number) => answerable.reduce((a, [, c]) => a + f(c), 0);
    const unrelatedRate = unrelatedBlocks / unrelatedRuns;
    return {
      embedder: embedder.id,
      thresholds: calibrated,
      data: { memories: memories.length, questions: queries.length, unrelated_prompts: UNRELATED_PROMPTS.length, unrelated_runs: unrelatedRuns },
      related: {
        block_rate: round(sum((c) => c.block) / sum((c) => c.questions), 3),
        evidence_hit_rate: round(sum((c) => c.evidence) / sum((c) => c.questions), 3),
        evidence_share_of_blocks: round(
          sum((c) => c.evidence) /
            Math.max(
              1,
              sum((c) => c.block),
            ),
          3,
        ),
        mean_lines: round(lines / queries.length, 2),
        by_category: Object.fromEntries(
          Object.entries(byCategory).map(([cat, c]) => [
            cat,
            { questions: c.questions, block_rate: round(c.block / c.questions, 3), evidence_hit_rate: round(c.evidence / c.questions, 3) },
          ]),
        ),
        note: "categories 1-4 (5 is adversarial: its answer is not in the conversation; shown per category only)",
      },
      unrelated: { block_rate: round(unrelatedRate, 3), meets_target: unrelatedRate < TARGET.unrelated_block_rate },
      budget: budgetFigures,
      as_sessions: {
        block_rate: round(sessionBlocks / sessionQuestions, 3),
        evidence_hit_rate: round(sessionEvidence / sessionQuestions, 3),
        evidence_share_of_blocks: round(sessionEvidence / Math.max(1, sessionBlocks), 3),
        unrelated_block_rate: round(topicUnrelatedBlocks / topicUnrelatedRuns, 3),
        note: "categories 1-4 asked in order, one session per conversation, session topic carried",
      },
    };
  } finally {
    await s.close();
    rmSync(home, { recursive: true, force: true });
  }
}

const active = await loadEmbedder({
  home: pathsFor(process.env.MEMSVC_HOME ?? join(process.env.HOME ?? ".", ".memsvc")).home,
  model: "Xenova/bge-small-en-v1.5",
  offline: true,
  log: (l) => log(l),
});
const result = {
  bench: "recall-index",
  date: new Date().toISOString(),
  target: TARGET,
  embedding: [await embeddingTime(active), ...(active.kind === "fallback" ? [] : [await embeddingTime(new FallbackEmbedder())])],
  latency: await latency(),
  relevance: await relevance(active),
};
await active.close?.();
const json = JSON.stringify(result, null, 2);
console.log(json);
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
writeFileSync(join(ROOT, "bench/results", `recall-${result.date.replace(/[:.]/g, "-")}.json`), `${json}\n`);
