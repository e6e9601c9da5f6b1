/**
 * Capture benchmark. Prints JSON:
 *  - denoise: bytes of each fixture transcript in, bytes of /distill request bodies out;
 *  - throughput: /distill against the fake OpenAI-compatible model answering after a
 *    realistic delay (default 800 ms per call), sequential and 4 at a time, plus
 *    /search latency while distills are in flight (the hot path) against idle.
 * Usage: bun bench/distill.ts [--delay 800] [--segments 12]
 */
import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { distillBody, planTranscript } from "../src/capture/run";
import { loadConfig } from "../src/config";
import { startFakeLlm } from "../test/helpers/fake-llm";
import { postJson, startServer } from "../test/helpers/server";

const ROOT = resolve(import.meta.dir, "..");
const { values } = parseArgs({ options: { delay: { type: "string", default: "800" }, segments: { type: "string", default: "12" } } });
const DELAY = Number(values.delay);
const SEGMENTS = Number(values.segments);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10 : null;
};

// 1. Denoiser reduction on the fixtures.
const config = loadConfig({ MEMSVC_HOME: "/nonexistent-bench-home" });
const fixtures: { file: string; format: "claude" | "generic" }[] = [
  ...readdirSync(join(ROOT, "test/fixtures/claude-code")).map((f) => ({ file: join(ROOT, "test/fixtures/claude-code", f), format: "claude" as const })),
  { file: join(ROOT, "test/fixtures/generic/session.jsonl"), format: "generic" },
];
const bodies: Record<string, unknown>[] = [];
const denoise = fixtures.map(({ file, format }) => {
  const plan = planTranscript(file, format, null);
  const out = plan.segments.map((s) => distillBody(config, plan.sessionId, plan.project, s));
  bodies.push(...out);
  const bytesIn = statSync(file).size;
  const bytesSent = out.reduce((n, b) => n + Buffer.byteLength(JSON.stringify(b)), 0);
  return {
    fixture: file.slice(ROOT.length + 1),
    format,
    bytes_in: bytesIn,
    bytes_sent: bytesSent,
    reduction: Math.round((1 - bytesSent / bytesIn) * 1000) / 10,
    segments: out.length,
  };
});
const totalIn = denoise.reduce((n, d) => n + d.bytes_in, 0);
const totalSent = denoise.reduce((n, d) => n + d.bytes_sent, 0);

// 2. Throughput against the fake model.
const fake = startFakeLlm();
let call = 0;
// Distinct facts (the lexical embedder would merge sentences that differ only in numbers).
const NOUNS = [
  "invoice",
  "webhook",
  "scheduler",
  "cache",
  "gateway",
  "ledger",
  "exporter",
  "indexer",
  "mailer",
  "uploader",
  "resolver",
  "tracker",
  "renderer",
  "crawler",
  "notifier",
  "billing",
  "inventory",
  "checkout",
  "search",
  "auth",
];
const VERBS = [
  "retries failed jobs after",
  "rotates its credentials every",
  "flushes buffers each",
  "compacts storage nightly within",
  "pages the on-call team after",
  "caps concurrent workers at",
];
const UNITS = ["minutes", "hours", "requests", "megabytes", "seconds", "connections"];
fake.fallback = () => {
  call++;
  return {
    delayMs: DELAY,
    json: {
      memories: [0, 1, 2].map((k) => {
        const i = call * 3 + k;
        return {
          content: `The ${NOUNS[i % 20]} ${NOUNS[(i * 7 + 3) % 20]} component ${VERBS[i % 6]} ${i} ${UNITS[(i * 5) % 6]} (${NOUNS[(i * 11 + 5) % 20]} team, ticket ${i * 37}).`,
          memory_type: "knowledge",
          tags: ["bench"],
        };
      }),
    },
  };
};
const srv = await startServer({ config: { llm: { baseURL: fake.baseURL, model: "fake-bench", timeoutMs: 30_000 } } });
for (let i = 0; i < 300; i++)
  await postJson(`${srv.url}/ingest`, {
    content: `Seed memory ${i}: the ${i % 7 === 0 ? "orders" : "billing"} service keeps setting ${i} at value ${i * 3}.`,
    project: i % 2 ? "shop-api" : "billing-worker",
  });

async function searchLatencies(until: Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    const t = performance.now();
    await (await fetch(`${srv.url}/search?query=orders%20service%20setting`)).arrayBuffer();
    out.push(performance.now() - t);
    await Bun.sleep(20);
  }
  return out;
}

const idleSearch = await searchLatencies(Bun.sleep(1500));
const segment = (i: number) => ({ ...bodies[i % bodies.length], session_id: `bench-${i}`, segment_id: "0" });

async function run(concurrency: number) {
  const start = performance.now();
  const latencies: number[] = [];
  let stored = 0;
  let next = 0;
  const offset = concurrency * 1000;
  const worker = async () => {
    while (next < SEGMENTS) {
      const i = next++;
      const t = performance.now();
      const r = await postJson(`${srv.url}/distill`, segment(offset + i));
      if (r.status !== 201) throw new Error(`distill answered ${r.status}: ${await r.text()}`);
      stored += ((await r.json()) as { ids: string[] }).ids.length;
      latencies.push(performance.now() - t);
    }
  };
  const all = Promise.all(Array.from({ length: concurrency }, worker));
  const search = await searchLatencies(all);
  await all;
  const seconds = (performance.now() - start) / 1000;
  return {
    concurrency,
    segments: SEGMENTS,
    seconds: Math.round(seconds * 100) / 100,
    segments_per_min: Math.round((SEGMENTS / seconds) * 60 * 10) / 10,
    memories_stored_or_merged: stored,
    memories_per_min: Math.round((stored / seconds) * 60 * 10) / 10,
    segment_ms_p50: pct(latencies, 50),
    segment_ms_p95: pct(latencies, 95),
    overhead_ms_p50: Math.round((pct(latencies, 50)! - DELAY) * 10) / 10,
    search_during_ms_p50: pct(search, 50),
    search_during_ms_p95: pct(search, 95),
  };
}

const sequential = await run(1);
const parallel = await run(4);

// A long transcript: chunked to the model's context and distilled chunk by chunk.
const long = {
  messages: Array.from({ length: 200 }, (_, i) => ({
    role: i % 2 ? "assistant" : "user",
    content: `Turn ${i}: ${"the orders export and the migration runner interact through table locks. ".repeat(7)}`,
  })),
  session_id: "bench-long",
  segment_id: "0",
};
const callsBefore = fake.requests.length;
const tl = performance.now();
const lr = await postJson(`${srv.url}/distill`, long);
await lr.arrayBuffer();
const longRun = {
  chars: long.messages.reduce((n, m) => n + m.content.length, 0),
  context_chars: 24_000,
  model_calls: fake.requests.length - callsBefore,
  seconds: Math.round((performance.now() - tl) / 10) / 100,
  status: lr.status,
};

await srv.stop();
await fake.stop();
console.log(
  JSON.stringify(
    {
      bench: "distill",
      model_delay_ms: DELAY,
      embedder: "fallback (in-process server, bench/distill.ts)",
      denoise: { fixtures: denoise, total: { bytes_in: totalIn, bytes_sent: totalSent, reduction_pct: Math.round((1 - totalSent / totalIn) * 1000) / 10 } },
      throughput: [sequential, parallel],
      long_transcript: longRun,
      search_idle_ms: { p50: pct(idleSearch, 50), p95: pct(idleSearch, 95) },
    },
    null,
    2,
  ),
);
