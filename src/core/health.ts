import { VERSION } from "../version";
import type { EmbedderLoad, Services } from "./services";
import type { LlmClient } from "../llm/client";
import { cliLabel } from "../llm/cli-client";
import { isCliProvider } from "../config";

export interface Health {
  status: "ok";
  version: string;
  memories: number;
  links: number;
  db_size_kb: number;
  llm: string;
  embedder: { id: string; kind: string; description: string; reembedding: boolean; loading: EmbedderLoad | null };
  /** "loading" while a large store's vectors load after start-up: search is BM25-only until "ready". */
  index: "loading" | "ready";
  /** Vectors in the in-memory index. */
  index_vectors: number;
}

/** "<provider> <model>" from the configured base URL or harness CLI, or "not configured". */
export function llmLabel(s: Services): string {
  const { baseURL, model } = s.config.llm;
  if (isCliProvider(s.config.llm.provider)) return cliLabel(s.config.llm.provider, model);
  if (!baseURL || !model) return "not configured";
  let provider = "openai-compatible";
  try {
    const u = new URL(baseURL);
    if (u.hostname === "api.openai.com") provider = "openai";
    else if (u.port === "11434") provider = "ollama";
    else if (u.port === "1234") provider = "lmstudio";
    else provider = `openai-compatible@${u.host}`;
  } catch {
    /* validated at config load; keep the generic name */
  }
  return `${provider} ${model}`;
}

export async function health(s: Services): Promise<Health> {
  const [stats, reembedCursor] = await Promise.all([s.storage.stats(), s.storage.meta.get("reembed_cursor")]);
  return {
    status: "ok",
    version: VERSION,
    memories: stats.memories,
    links: stats.links,
    db_size_kb: Math.round(stats.bytes / 1024),
    llm: llmLabel(s),
    embedder: { id: s.embedder.id, kind: s.embedder.kind, description: s.embedder.description, reembedding: reembedCursor !== null, loading: s.embedderLoad },
    index: s.indexState.status,
    index_vectors: s.index.size,
  };
}

export interface LlmProbe {
  configured: boolean;
  /** "<provider> <model>" as /health reports it. */
  llm: string;
  ok: boolean;
  /** Round trip of the probe call, when it answered. */
  ms: number | null;
  error: string | null;
}

/**
 * One tiny chat completion through the same client /distill uses, so "ok"
 * means the configured model answers with JSON, which distillation needs.
 * Bounded by `timeoutMs`, not the (long) distillation timeout.
 */
export async function probeLlm(s: Services, llm: LlmClient | null, timeoutMs: number): Promise<LlmProbe> {
  const label = llmLabel(s);
  if (!llm) return { configured: false, llm: label, ok: false, ms: null, error: "no language model configured (llm.baseURL and llm.model)" };
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    await llm.chatJson([{ role: "user", content: 'Reply with exactly this JSON and nothing else: {"ok": true}' }], { signal, maxTokens: 20 });
    return { configured: true, llm: label, ok: true, ms: Math.round(performance.now() - started), error: null };
  } catch (e) {
    const where = isCliProvider(s.config.llm.provider) ? `(${label})` : `at ${s.config.llm.baseURL}`;
    const error = signal.aborted ? `the language model ${where} did not answer within ${Math.round(timeoutMs / 1000)} s` : (e as Error).message;
    return { configured: true, llm: label, ok: false, ms: null, error };
  }
}
