import { statSync } from "node:fs";
import { VERSION } from "../version";
import type { Services } from "./services";
import { getMeta } from "../db";

export interface Health {
  status: "ok";
  version: string;
  memories: number;
  links: number;
  db_size_kb: number;
  llm: string;
  embedder: { id: string; kind: string; description: string; reembedding: boolean };
  /** "loading" while a large store's vectors load after start-up: search is BM25-only until "ready". */
  index: "loading" | "ready";
  /** Vectors in the in-memory index. */
  index_vectors: number;
}

/** "<provider> <model>" from the configured base URL, or "not configured". */
export function llmLabel(s: Services): string {
  const { baseURL, model } = s.config.llm;
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

export function health(s: Services): Health {
  const counts = s.store.sqlite.query<{ m: number; l: number }, []>("SELECT (SELECT count(*) FROM memories) AS m, (SELECT count(*) FROM links) AS l").get()!;
  let size = 0;
  for (const suffix of ["", "-wal"]) {
    try {
      size += statSync(s.store.file + suffix).size;
    } catch {
      /* no WAL yet */
    }
  }
  return {
    status: "ok",
    version: VERSION,
    memories: counts.m,
    links: counts.l,
    db_size_kb: Math.round(size / 1024),
    llm: llmLabel(s),
    embedder: { id: s.embedder.id, kind: s.embedder.kind, description: s.embedder.description, reembedding: getMeta(s.store, "reembed_cursor") !== null },
    index: s.indexState.status,
    index_vectors: s.index.size,
  };
}
