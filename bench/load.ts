/**
 * Load benchmark (`bun bench/load.ts`): many concurrent clients against one
 * real server process (`bun src/main.ts server`) on 127.0.0.1, its store
 * seeded with ~10k memories, its model the fake OpenAI-compatible server
 * answering after a realistic delay. Searchers and recallers (agents with a
 * little think time between prompts) run next to clients that distill
 * sessions back to back, for a bounded time. Prints one JSON object (also
 * written to bench/results/): throughput, p50/p95/p99 per operation, errors,
 * and a lost-write check: every memory an acknowledged distill named is in
 * the database afterwards, which passes the consistency check of the fault
 * tests (vectors, FTS rows, orphans, integrity).
 *
 * Env: LOAD_SECONDS (60), LOAD_CLIENTS (32, all of them), LOAD_DISTILL_CLIENTS
 * (8 of them), LOAD_MEMORIES (10000), LOAD_MODEL_DELAY_MS ("300-800"),
 * LOAD_THINK_MS ("250-750": an agent's pause between prompts; "0" for clients that
 * never pause, which measures saturation, not latency), LOAD_SEED (42).
 * The agents first run alone for a third of LOAD_SECONDS (at least 10 s),
 * then next to the distillers for LOAD_SECONDS: the difference is what
 * distilling costs recall.
 * Target: zero errors, zero lost writes, recall p95 < 50 ms while distilling.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { checkStore } from "../test/helpers/integrity";
import { startFakeLlm } from "../test/helpers/fake-llm";
import { NoteGenerator, prng } from "./lib/corpus";
import { seedStore } from "./lib/seed";
import { cpuMsOf, memoryOf, ROOT, serverCommand, spawnServer } from "./lib/server";
import { round, summarize } from "./lib/stats";

const env = (key: string, fallback: string) => process.env[key] ?? fallback;
const range = (text: string): [number, number] => {
  const [lo, hi = lo] = text.split("-").map(Number);
  return [lo, hi];
};
const SECONDS = Number(env("LOAD_SECONDS", "60"));
const CLIENTS = Number(env("LOAD_CLIENTS", "32"));
const DISTILLERS = Math.min(CLIENTS - 1, Number(env("LOAD_DISTILL_CLIENTS", "8")));
const MEMORIES = Number(env("LOAD_MEMORIES", "10000"));
const DELAY = range(env("LOAD_MODEL_DELAY_MS", "300-800"));
const THINK = range(env("LOAD_THINK_MS", "250-750"));
const SEED = Number(env("LOAD_SEED", "42"));
const TARGET = { recall_p95_ms: 50, errors: 0, lost_writes: 0 };
const log = (line: string) => process.stderr.write(`[bench:load] ${line}\n`);

const r = prng(SEED);
const between = ([lo, hi]: [number, number]) => lo + Math.floor(r() * (hi - lo + 1));

// The model: 2-3 memories per call, worded like the seeded notes, after 300-800 ms.
const model = startFakeLlm();
const modelNotes = new NoteGenerator(SEED + 1);
model.fallback = () => ({
  delayMs: between(DELAY),
  json: { memories: Array.from({ length: 2 + Math.floor(r() * 2) }, () => ({ content: modelNotes.note().content, memory_type: "knowledge", tags: [] })) },
});

const home = mkdtempSync(join(tmpdir(), "memsvc-bench-load-"));
log(`seeding ${MEMORIES} memories into ${home}`);
const seeded = seedStore(join(home, "memsvc.db"), new NoteGenerator(SEED), MEMORIES);
writeFileSync(
  join(home, "config.json"),
  JSON.stringify({ llm: { baseURL: model.baseURL, model: "fake-load", apiKey: "k", timeoutMs: 30_000 }, nightly: { enabled: false } }),
);
const server = await spawnServer(home, serverCommand("source"));
log(`server up in ${Math.round(server.startMs)} ms at ${server.url}; ${CLIENTS} clients (${DISTILLERS} distilling) for ${SECONDS} s`);

type Op = "search" | "recall" | "distill";
type Phase = "agents_only" | "with_distills";
const samples: Record<Phase, Record<Op, number[]>> = {
  agents_only: { search: [], recall: [], distill: [] },
  with_distills: { search: [], recall: [], distill: [] },
};
const errors: Record<Op, string[]> = { search: [], recall: [], distill: [] };
const acked: { session: string; ids: string[] }[] = [];

async function timed(phase: Phase, op: Op, send: () => Promise<Response>, ok: number[]): Promise<unknown> {
  const t = performance.now();
  try {
    const res = await send();
    const body = await res.json();
    const ms = performance.now() - t;
    if (!ok.includes(res.status)) {
      errors[op].push(`${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      return null;
    }
    samples[phase][op].push(ms);
    return body;
  } catch (e) {
    errors[op].push((e as Error).message);
    return null;
  }
}

const post = (path: string, body: unknown) => () =>
  fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** An agent: a recall-index call per prompt, a search now and then, a pause between prompts. */
async function agent(phase: Phase, c: number, until: number): Promise<void> {
  const gen = new NoteGenerator(SEED + 100 + c + (phase === "agents_only" ? 0 : 500));
  for (let turn = 0; performance.now() < until; turn++) {
    const q = gen.query();
    if (turn % 2 === 0) {
      await timed(
        phase,
        "recall",
        post("/recall-index", { session_id: `load-${phase}-${c}`, prompt: q.query, ...(q.project ? { project: q.project } : {}) }),
        [200],
      );
    } else {
      const params = new URLSearchParams({ query: q.query });
      if (q.project) params.set("project", q.project);
      await timed(phase, "search", () => fetch(`${server.url}/search?${params}`), [200]);
    }
    if (THINK[1] > 0) await Bun.sleep(between(THINK));
  }
}

/** A capture client: distils one session after another (6 notes of text each), no pause. */
async function distiller(c: number, until: number): Promise<void> {
  const gen = new NoteGenerator(SEED + 1000 + c);
  for (let n = 0; performance.now() < until; n++) {
    const session = `load-distill-${c}-${n}`;
    const text = Array.from({ length: 6 }, () => gen.note().content).join("\n");
    const body = (await timed(
      "with_distills",
      "distill",
      post("/distill", { text, session_id: session, project: gen.project(), source_agent: "bench-load" }),
      [201],
    )) as { ids: string[] } | null;
    if (body) acked.push({ session, ids: body.ids });
  }
}

async function phase(name: Phase, seconds: number, distillers: number): Promise<{ wall_s: number; server_cpu_s: number; loadavg_1m: number }> {
  const until = performance.now() + seconds * 1000;
  const cpu0 = cpuMsOf(server.pid);
  const t = performance.now();
  await Promise.all([
    ...Array.from({ length: distillers }, (_, c) => distiller(c, until)),
    ...Array.from({ length: CLIENTS - DISTILLERS }, (_, c) => agent(name, c, until)),
  ]);
  return { wall_s: round((performance.now() - t) / 1000), server_cpu_s: round((cpuMsOf(server.pid) - cpu0) / 1000), loadavg_1m: round(loadavg()[0]) };
}

// The same agents first alone, then next to the distillers: the difference is what distilling costs recall.
const load0 = round(loadavg()[0]);
const baseline = await phase("agents_only", Math.max(10, Math.round(SECONDS / 3)), 0);
const mixed = await phase("with_distills", SECONDS, DISTILLERS);
const memory = memoryOf(server.pid);
await server.stop();
await model.stop();

// Zero lost writes: every memory an acknowledged distill named is stored, and the store is whole.
const check = checkStore(join(home, "memsvc.db"));
const lost = acked.flatMap((a) => a.ids.filter((id) => !check.ids.has(id)));
const figures = (p: Phase, wall: number) => {
  const out: Record<string, unknown> = {};
  for (const name of ["search", "recall", "distill"] as Op[]) {
    if (p === "agents_only" && name === "distill") continue;
    out[name] = { count: samples[p][name].length, per_s: round(samples[p][name].length / wall, 1), latency_ms: summarize(samples[p][name]) };
  }
  return out;
};
const recallP95 = summarize(samples.with_distills.recall).p95;
const totalErrors = errors.search.length + errors.recall.length + errors.distill.length;
const requests = (p: Phase) => samples[p].search.length + samples[p].recall.length + samples[p].distill.length;
const result = {
  bench: "load",
  at: new Date().toISOString(),
  config: {
    seconds: SECONDS,
    clients: CLIENTS,
    distill_clients: DISTILLERS,
    agent_clients: CLIENTS - DISTILLERS,
    memories_seeded: seeded.total,
    model_delay_ms: DELAY,
    agent_think_ms: THINK,
    seed: SEED,
    server: "bun src/main.ts server on 127.0.0.1",
  },
  machine: { cores: cpus().length, loadavg_1m_before: load0, note: "shared with other work: latencies include waiting for a core" },
  agents_only: {
    ...baseline,
    server_cpu_ms_per_request: round((baseline.server_cpu_s * 1000) / Math.max(1, requests("agents_only"))),
    ops: figures("agents_only", baseline.wall_s),
  },
  with_distills: {
    ...mixed,
    server_cpu_ms_per_request: round((mixed.server_cpu_s * 1000) / Math.max(1, requests("with_distills"))),
    ops: figures("with_distills", mixed.wall_s),
    model_calls: model.requests.length,
    memories_acknowledged: acked.reduce((n, a) => n + a.ids.length, 0),
  },
  errors: {
    total: totalErrors,
    search: errors.search.length,
    recall: errors.recall.length,
    distill: errors.distill.length,
    first: [...errors.search, ...errors.recall, ...errors.distill].slice(0, 5),
  },
  server: memory,
  writes: { distills_acknowledged: acked.length, lost_writes: lost.length, memories_after: check.memories, store_problems: check.problems },
  target: {
    ...TARGET,
    recall_p95_ms_with_distills: recallP95,
    met: totalErrors === 0 && lost.length === 0 && check.problems.length === 0 && recallP95 < TARGET.recall_p95_ms,
  },
};
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
writeFileSync(join(ROOT, "bench/results", `load-${result.at.replace(/[:.]/g, "-")}.json`), JSON.stringify(result, null, 2));
console.log(JSON.stringify(result, null, 2));
