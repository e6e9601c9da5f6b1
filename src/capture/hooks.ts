import { spawn } from "node:child_process";
import { serverFetch } from "../server-client";
import { openSync } from "node:fs";
import { basename, join } from "node:path";
import type { Config } from "../config";
import { HOOK_BUDGET_MS, STALE_HOOK_BUDGET_MS } from "./tuning";
import { checkStaleness } from "./stale";
import { recordInjection } from "./use";
import { ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../private-files";

/**
 * Harness hook handlers (Claude Code first). Each returns the text to print
 * on stdout, which the harness adds to the agent's context; "" prints
 * nothing. They never throw to the agent: the CLI turns every failure into
 * silence.
 */

export const HOOK_EVENTS = ["session-start", "user-prompt", "pre-compact", "session-end", "codex-notify"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];
export { HOOK_BUDGET_MS };

/** Claude Code's hook JSON on stdin (the fields used here). */
export interface HookInput {
  session_id?: string;
  transcript_path?: string;
  cwd?: string;
  prompt?: string;
  hook_event_name?: string;
  /** Codex CLI `notify` payload (passed as the last argument, not on stdin): "agent-turn-complete". */
  type?: string;
}

/** The harness name as listed in identityClients. */
export const HARNESS = "claude-code";

/**
 * Which harness runs the hook: Claude Code (the default) or Gemini CLI
 * (`--harness gemini`), whose hooks send the same stdin fields but whose
 * sessions are found by `memsvc capture --harness gemini`, not by path.
 */
export type HookHarness = "claude-code" | "gemini";
const IDENTITY_CLIENT: Record<HookHarness, string> = { "claude-code": HARNESS, gemini: "gemini-cli" };

type Json = Record<string, any>;

/** GET or POST JSON to the local server within what is left of the budget; null on any failure. */
async function call(config: Config, path: string, deadline: number, body?: unknown): Promise<Json | null> {
  const left = deadline - Date.now();
  if (left <= 20) return null;
  try {
    // The token goes with every call: the server's localhost bypass may be off (auth.localhostBypass).
    const res = await serverFetch(config, path, {
      method: body === undefined ? "GET" : "POST",
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(left),
    });
    if (!res.ok) return null;
    const json = (await res.json()) as unknown;
    return json && typeof json === "object" ? (json as Json) : null;
  } catch {
    return null;
  }
}

const projectOf = (input: HookInput) => (input.cwd ? basename(input.cwd.replace(/[\\/]+$/, "")) || undefined : undefined);

async function sessionStart(config: Config, input: HookInput, deadline: number, harness: HookHarness): Promise<string> {
  const project = projectOf(input);
  const client = IDENTITY_CLIENT[harness];
  const wantsIdentity = config.identityClients.some((c) => c.trim().toLowerCase() === client);
  const [identity, learnings] = await Promise.all([
    wantsIdentity ? call(config, "/identity", deadline) : Promise.resolve(null),
    call(config, `/learnings${project ? `?project=${encodeURIComponent(project)}` : ""}`, deadline),
  ]);
  const out: string[] = [];
  // The server's resolved list wins when it sends one: it is the same setting, read by the server.
  const clients: unknown = identity?.clients;
  const listed = Array.isArray(clients) ? clients.includes(client) : wantsIdentity;
  const sections = identity?.sections;
  if (listed && sections && typeof sections === "object") {
    const body = Object.entries(sections as Record<string, unknown>)
      .filter((e): e is [string, string] => typeof e[1] === "string" && e[1].trim() !== "")
      .map(([name, md]) => `### ${name}\n\n${md.trim()}`)
      .join("\n\n");
    if (body) out.push(body);
  }
  if (typeof learnings?.block === "string" && learnings.block.trim()) out.push(learnings.block.trim());
  // After the fetches (git runs synchronously), within what is left: the marks then show in this session's recall.
  const staleBy = Math.min(deadline - 300, Date.now() + STALE_HOOK_BUDGET_MS);
  if (input.cwd && staleBy > Date.now()) await checkStaleness(config, input.cwd, staleBy).catch(() => {});
  return out.join("\n\n");
}

async function userPrompt(config: Config, input: HookInput, deadline: number, harness: HookHarness): Promise<string> {
  if (!input.session_id || typeof input.prompt !== "string" || !input.prompt.trim()) return "";
  const res = await call(config, "/recall-index", deadline, {
    session_id: input.session_id,
    prompt: input.prompt,
    project: projectOf(input),
    agent: IDENTITY_CLIENT[harness],
  });
  if (typeof res?.block !== "string") return "";
  // What was injected, kept on this machine: capture later sees whether the agent relied on it (use.ts).
  try {
    if (Array.isArray(res.shown))
      recordInjection(
        config.home,
        input.session_id,
        res.shown.filter((x: unknown): x is string => typeof x === "string"),
        input.prompt,
      );
  } catch {
    /* use detection is a bonus: the block still goes to the agent */
  }
  return res.block;
}

/** Starts `memsvc capture` detached, so it outlives the hook (and the session); its output goes to a log. */
export function spawnCapture(config: Config, transcriptPath: string | undefined, harness?: string): void {
  const dir = join(config.home, "state");
  ensurePrivateDir(dir);
  const log = join(dir, "capture.log");
  const out = openSync(log, "a", PRIVATE_FILE_MODE);
  makePrivate(log);
  // From source: bun <main.ts> capture; compiled: <binary> capture.
  const main = Bun.main;
  const self = main.startsWith("/$bunfs") || main.startsWith("B:/~BUN") ? [] : [main];
  const args = [...self, "capture", ...(transcriptPath ? ["--file", transcriptPath] : harness ? ["--harness", harness] : [])];
  const child = spawn(process.execPath, args, { detached: true, stdio: ["ignore", out, out], env: { ...process.env, MEMSVC_HOME: config.home } });
  child.unref();
}

async function compactOrEnd(config: Config, input: HookInput, deadline: number, harness: HookHarness): Promise<string> {
  // Gemini's transcript_path is its own session JSON: capture finds and flattens Gemini sessions itself.
  if (harness === "gemini") spawnCapture(config, undefined, "gemini");
  else spawnCapture(config, input.transcript_path);
  if (input.session_id) await call(config, "/recall-index", deadline, { session_id: input.session_id, reset: true });
  return "";
}

export async function handleHook(event: HookEvent, input: HookInput, config: Config, deadline: number, harness: HookHarness = "claude-code"): Promise<string> {
  switch (event) {
    case "session-start":
      return sessionStart(config, input, deadline, harness);
    case "user-prompt":
      return userPrompt(config, input, deadline, harness);
    case "pre-compact":
    case "session-end":
      return compactOrEnd(config, input, deadline, harness);
    case "codex-notify":
      // Codex names no transcript path; its rollouts are found where it writes them, and only new lines are read.
      if (input.type === "agent-turn-complete") spawnCapture(config, undefined, "codex");
      return "";
  }
}
