import { backlogSummary, readBacklog } from "../capture/backlog";
import { serverFetch } from "../server-client";
import { loadConfig } from "../config";
import { counted } from "../core/text";
import { parseFlags } from "./args";

export const STATUS_HELP = `memsvc status [--json]

Asks the running server (GET /health) and prints its version, counts,
language model, embedder and the bearer token. Exits 1 when no server
answers.

The server is found at, first match wins: MEMSVC_URL; serverUrl in
config.json; <home>/server.json, written by a running \`memsvc server\` (so
\`--port\` needs nothing else); host and port in config.json;
http://127.0.0.1:8787.`;

export async function runStatus(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, { json: { type: "boolean" } });
  if (values.help) {
    console.log(STATUS_HELP);
    return 0;
  }
  const config = loadConfig();
  let health: Record<string, any>;
  try {
    // Generous: a server that has just started (index load, start-up work) on a busy machine answers late, and a person waits at most this.
    const res = await serverFetch(config, "/health", { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    health = (await res.json()) as Record<string, any>;
  } catch (e) {
    console.error(
      `memsvc status: no server answers at ${config.serverUrl} (${(e as Error).message}; address from ${config.serverUrlFrom}); start one with \`memsvc server\``,
    );
    return 1;
  }
  const backlog = backlogSummary(readBacklog(config.home));
  if (values.json) {
    console.log(JSON.stringify({ ...health, url: config.serverUrl, url_from: config.serverUrlFrom, token: config.token, backlog }, null, 2));
    return 0;
  }
  const lines = [
    `server:    ${config.serverUrl} (${health.status}; address from ${config.serverUrlFrom})`,
    `version:   ${health.version}`,
    `memories:  ${health.memories}`,
    `links:     ${health.links}`,
    `database:  ${health.db_size_kb} KB`,
    `llm:       ${health.llm}`,
    `embedder:  ${health.embedder?.description ?? "?"} [${health.embedder?.id ?? "?"}]${health.embedder?.reembedding ? " (re-embedding in progress)" : ""}${loadingNote(health.embedder?.loading)}`,
    `token:     ${config.token ?? "(none: run `memsvc init`)"}`,
  ];
  if (backlog.total > 0) lines.push(`backlog:   ${backlogLine(backlog)}`);
  console.log(lines.join("\n"));
  return 0;
}

/** " (downloading X since T; ...)" while a model loads in the background, or why that failed. */
export function loadingNote(loading: { model?: string; state?: string; since?: string; error?: string } | null | undefined): string {
  if (!loading || typeof loading !== "object") return "";
  if (loading.state === "downloading") return ` (downloading ${loading.model} since ${loading.since}; switches to it when ready)`;
  if (loading.state === "failed") return ` (could not load ${loading.model}: ${loading.error}; the next start tries again)`;
  return "";
}

/** "3 sessions wait for a language model; 1 session found no server", for status and doctor. */
export function backlogLine(b: ReturnType<typeof backlogSummary>): string {
  const sessions = (n: number) => counted(n, "session");
  const waits = (n: number) => (n === 1 ? "waits" : "wait");
  const parts: string[] = [];
  if (b.noModel) parts.push(`${sessions(b.noModel)} ${waits(b.noModel)} for a language model`);
  if (b.modelFailed) parts.push(`${sessions(b.modelFailed)} ${waits(b.modelFailed)} for the language model to answer again`);
  if (b.noServer) parts.push(`${sessions(b.noServer)} found no server when captured`);
  return parts.join("; ");
}
