import type { Note, Query } from "./corpus";
import { cpuMsOf, mainThreadCpuMsOf } from "./server";
import { round, summarize, type Summary } from "./stats";

export interface GetFigures {
  /** Wall time per request seen by the client (includes waiting for a CPU on a shared machine). */
  latency_ms: Summary;
  /** CPU the server process spent per request: what contention cannot inflate. */
  server_cpu_ms_per_request: number;
  /** Of that, the server's main thread (bench/lib/server.ts mainThreadCpuMsOf); set where measured. */
  server_main_thread_cpu_ms_per_request?: number;
  mean_results: number;
  /** The untimed warm-up requests before them (the first searches a fresh server answers), apart. */
  warmup_latency_ms?: Summary;
}

/** Sequential GETs from one client over a kept-alive connection to the server process `pid`. */
export async function timeGets(url: string, pid: number, paths: string[], warmup = 20): Promise<GetFigures> {
  const get = async (path: string) => {
    const res = await fetch(url + path);
    const body = (await res.json()) as { count?: number };
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(body)}`);
    return body.count ?? 0;
  };
  const warm: number[] = [];
  for (const p of paths.slice(0, warmup)) {
    const t = performance.now();
    await get(p);
    warm.push(performance.now() - t);
  }
  const samples: number[] = [];
  let results = 0;
  const cpu = cpuMsOf(pid);
  for (const p of paths) {
    const t = performance.now();
    results += await get(p);
    samples.push(performance.now() - t);
  }
  return {
    latency_ms: summarize(samples),
    server_cpu_ms_per_request: round((cpuMsOf(pid) - cpu) / paths.length),
    mean_results: round(results / paths.length, 1),
    ...(warm.length ? { warmup_latency_ms: summarize(warm) } : {}),
  };
}

export function searchPath(q: Query): string {
  const params = new URLSearchParams({ query: q.query });
  if (q.project) params.set("project", q.project);
  return `/search?${params}`;
}

export interface IngestFigures {
  memories: number;
  concurrency: number;
  seconds: number;
  memories_per_s: number;
  latency_ms: Summary;
}

/** POST /ingest of `notes` with `concurrency` clients in flight; every answer must be 201. */
export async function ingestOverHttp(url: string, notes: Note[], concurrency: number): Promise<IngestFigures> {
  const samples: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < notes.length) {
      const note = notes[next++];
      const t = performance.now();
      const res = await fetch(`${url}/ingest`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content: note.content, project: note.project, memory_type: note.memoryType, source_agent: "bench-agent" }),
      });
      const body = await res.text();
      if (res.status !== 201) throw new Error(`POST /ingest: ${res.status} ${body}`);
      samples.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  return { memories: notes.length, concurrency, seconds: round(seconds), memories_per_s: Math.round(notes.length / seconds), latency_ms: summarize(samples) };
}

/** Sequential POST /recall-index from one client (one session per prompt, so nothing is suppressed as already shown). */
export async function timeRecall(url: string, pid: number, prompts: { prompt: string; project: string | null }[], warmup = 20): Promise<GetFigures> {
  let session = 0;
  const post = async (p: { prompt: string; project: string | null }) => {
    const res = await fetch(`${url}/recall-index`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ session_id: `bench-${session++}`, prompt: p.prompt, ...(p.project ? { project: p.project } : {}) }),
    });
    const body = (await res.json()) as { block?: string | null };
    if (res.status !== 200) throw new Error(`POST /recall-index: ${res.status} ${JSON.stringify(body)}`);
    return body.block ? 1 : 0;
  };
  for (const p of prompts.slice(0, warmup)) await post(p);
  const samples: number[] = [];
  let blocks = 0;
  const cpu = cpuMsOf(pid);
  const main = mainThreadCpuMsOf(pid);
  for (const p of prompts) {
    const t = performance.now();
    blocks += await post(p);
    samples.push(performance.now() - t);
  }
  // mean_results: the share of prompts that got a block.
  return {
    latency_ms: summarize(samples),
    server_cpu_ms_per_request: round((cpuMsOf(pid) - cpu) / prompts.length),
    server_main_thread_cpu_ms_per_request: round((mainThreadCpuMsOf(pid) - main) / prompts.length),
    mean_results: round(blocks / prompts.length, 2),
  };
}

/** One slice of a sustained ingest: the memories the store held before and after it, its rate and the server's CPU per memory. */
export interface IngestSlice {
  from: number;
  to: number;
  memories_per_s: number;
  /** Server CPU (user + system) per memory: what a loaded machine inflates least. */
  server_cpu_ms_per_memory: number;
  latency_ms_p50: number;
  latency_ms_p95: number;
}

/**
 * POST /ingest of `total` notes from `next()` into the server `pid`, with
 * `concurrency` clients, reported per `slice` memories: does the rate hold as
 * the store grows? `at` is how many memories the store held before.
 */
export async function ingestSustained(
  url: string,
  pid: number,
  next: () => Note,
  total: number,
  slice: number,
  concurrency = 1,
  at = 0,
): Promise<IngestSlice[]> {
  const slices: IngestSlice[] = [];
  for (let done = 0; done < total; done += slice) {
    const n = Math.min(slice, total - done);
    const notes = Array.from({ length: n }, next);
    const cpu = cpuMsOf(pid);
    const f = await ingestOverHttp(url, notes, concurrency);
    slices.push({
      from: at + done,
      to: at + done + n,
      memories_per_s: f.memories_per_s,
      server_cpu_ms_per_memory: round((cpuMsOf(pid) - cpu) / n, 3),
      latency_ms_p50: f.latency_ms.p50,
      latency_ms_p95: f.latency_ms.p95,
    });
  }
  return slices;
}
