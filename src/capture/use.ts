import { counted } from "../core/text";
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config";
import { ensurePrivateDir, makePrivate, PRIVATE_FILE_MODE } from "../private-files";
import { STOP_WORDS } from "../core/text";
import type { Line } from "./transcript";
import { USE_MIN_CUES, USE_MIN_WORD_CUES, USE_WORD_CUE_SHARE } from "./tuning";

/**
 * Use detection: did the agent rely on a memory its recall block injected?
 * The hook saw the block (it records what was injected, here, on this
 * machine); capture then holds what the agent wrote next. A shown memory
 * counts as used when its distinctive terms (identifiers, paths, commands,
 * numbers, rarer words) that the prompt itself did not contain come back in
 * the agent's following turns or tool calls, or when the agent cites its
 * short id. Computed locally, without a model; only the ids go to the
 * server (POST /recall/used), which counts each once per prompt.
 */

/** One prompt's injection as the hook recorded it. */
export interface Injection {
  session_id: string;
  at: number;
  ids: string[];
  /** The prompt's own words (lower case): echoing them is no sign of use. */
  prompt_terms: string[];
}

const dirOf = (home: string) => join(home, "state", "injected");
const fileOf = (home: string, sessionId: string) => join(dirOf(home), `${createHash("sha256").update(sessionId).digest("hex").slice(0, 20)}.jsonl`);

const WORD = /[\p{L}\p{N}][\p{L}\p{N}_.\-/:@]*[\p{L}\p{N}]|[\p{L}\p{N}]/gu;

/** Lower-case word tokens of a text, identifiers kept whole (deploy.yml, src/db.ts, pg_dump). */
export function terms(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).filter((t) => t.length > 1);
}

/** Called by the user-prompt hook with the answer it injects (a few hundred bytes, appended). */
export function recordInjection(home: string, sessionId: string, ids: readonly string[], prompt: string, at = Date.now()): void {
  if (ids.length === 0) return;
  ensurePrivateDir(dirOf(home));
  const file = fileOf(home, sessionId);
  const fresh = !existsSync(file);
  const rec: Injection = { session_id: sessionId, at, ids: [...ids], prompt_terms: [...new Set(terms(prompt))].slice(0, 200) };
  appendFileSync(file, `${JSON.stringify(rec)}\n`, { mode: PRIVATE_FILE_MODE });
  if (fresh) makePrivate(file);
}

export function readInjections(home: string, sessionId: string): Injection[] {
  const file = fileOf(home, sessionId);
  if (!existsSync(file)) return [];
  const out: Injection[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as Injection;
      if (r && r.session_id === sessionId && Array.isArray(r.ids) && typeof r.at === "number")
        out.push({ ...r, prompt_terms: Array.isArray(r.prompt_terms) ? r.prompt_terms : [] });
    } catch {
      /* a torn line: skipped */
    }
  }
  return out;
}

/** Keeps only the injections not yet settled (those newer than what the transcript covered). */
function keepInjections(home: string, sessionId: string, keep: Injection[]): void {
  const file = fileOf(home, sessionId);
  if (keep.length === 0) rmSync(file, { force: true });
  else writeFileSync(file, keep.map((r) => `${JSON.stringify(r)}\n`).join(""), { mode: PRIVATE_FILE_MODE });
}

/** A strong cue says "this memory" on its own: an identifier, a path, a number, a command flag. */
const isStrong = (t: string) => /[_./:@-]/.test(t) || /\d/.test(t);

/** The memory's cues: its distinctive terms, less the prompt's own words and common ones. */
export function cuesOf(content: string, promptTerms: ReadonlySet<string>): { strong: Set<string>; words: Set<string> } {
  const strong = new Set<string>();
  const words = new Set<string>();
  for (const t of terms(content)) {
    if (promptTerms.has(t) || STOP_WORDS.has(t)) continue;
    if (isStrong(t) && t.length >= 3) strong.add(t);
    else if (t.length >= 5) words.add(t);
  }
  return { strong, words };
}

/** What the agent wrote: its text and tool calls (tool results are what the world said back, not the agent). */
function agentText(lines: readonly Line[]): string {
  return lines
    .flatMap((l) => l.parts)
    .filter((p) => p.kind === "assistant" || p.kind === "tool_use")
    .map((p) => p.text)
    .join("\n");
}

/**
 * Which injected memories the agent relied on: its short id cited, or at
 * least USE_MIN_CUES of the memory's cues in what it wrote, one of them
 * strong; or, for a memory of plain words, USE_MIN_WORD_CUES of them and
 * USE_WORD_CUE_SHARE of all it has.
 */
export function usedMemories(written: string, injected: readonly { id: string; content: string }[], promptTerms: ReadonlySet<string>): string[] {
  const said = new Set(terms(written));
  const lower = written.toLowerCase();
  const used: string[] = [];
  for (const m of injected) {
    if (lower.includes(m.id.slice(0, 8))) {
      used.push(m.id);
      continue;
    }
    const { strong, words } = cuesOf(m.content, promptTerms);
    const strongHits = [...strong].filter((t) => said.has(t) || (t.length >= 6 && lower.includes(t))).length;
    const wordHits = [...words].filter((t) => said.has(t)).length;
    const total = strong.size + words.size;
    if (
      (strongHits >= 1 && strongHits + wordHits >= USE_MIN_CUES) ||
      (wordHits >= USE_MIN_WORD_CUES && total > 0 && (strongHits + wordHits) / total >= USE_WORD_CUE_SHARE)
    )
      used.push(m.id);
  }
  return used;
}

const msOf = (ts: string | null) => (ts ? Date.parse(ts) : Number.NaN);

/**
 * After capture read a session's new lines: for each recorded injection,
 * the agent's turns from that prompt to the next injection are checked, and
 * the used ids are sent. Injections the lines reached are settled (removed);
 * the latest stays until a later capture sees turns after it. Never throws:
 * use detection must not fail a capture.
 */
export async function reportUses(
  config: Config,
  sessionId: string,
  lines: readonly Line[],
  log: (line: string) => void = () => {},
): Promise<{ checked: number; used: number }> {
  try {
    const injections = readInjections(config.home, sessionId).sort((a, b) => a.at - b.at);
    if (injections.length === 0 || lines.length === 0) return { checked: 0, used: 0 };
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (config.token) headers.authorization = `Bearer ${config.token}`;
    const contents = new Map<string, string>();
    for (const id of new Set(injections.flatMap((r) => r.ids))) {
      const res = await fetch(`${config.serverUrl}/memories/detail?id=${encodeURIComponent(id)}`, { headers, signal: AbortSignal.timeout(10_000) }).catch(
        () => null,
      );
      const body = res?.ok ? ((await res.json().catch(() => null)) as { memory?: { content?: string } } | null) : null;
      if (typeof body?.memory?.content === "string") contents.set(id, body.memory.content);
    }
    const dated = lines.some((l) => Number.isFinite(msOf(l.timestamp)));
    const lastAt = Math.max(...lines.map((l) => msOf(l.timestamp)).filter(Number.isFinite));
    const settled: Injection[] = [];
    let used = 0;
    for (const [i, rec] of injections.entries()) {
      const until = injections[i + 1]?.at ?? Number.POSITIVE_INFINITY;
      // Without timestamps (some harness formats) the whole delta is the window.
      const window = dated
        ? lines.filter((l) => {
            const t = msOf(l.timestamp);
            return Number.isFinite(t) && t >= rec.at && t < until;
          })
        : lines;
      if (dated && !(lastAt >= rec.at)) continue;
      settled.push(rec);
      const ids = usedMemories(
        agentText(window),
        rec.ids.filter((id) => contents.has(id)).map((id) => ({ id, content: contents.get(id)! })),
        new Set(rec.prompt_terms),
      );
      if (ids.length === 0) continue;
      const res = await fetch(`${config.serverUrl}/recall/used`, {
        method: "POST",
        headers,
        body: JSON.stringify({ session_id: sessionId, ids }),
        signal: AbortSignal.timeout(10_000),
      }).catch(() => null);
      if (!res?.ok) {
        // Kept for the next run.
        settled.pop();
        continue;
      }
      used += ((await res.json().catch(() => null)) as { used?: string[] } | null)?.used?.length ?? 0;
    }
    keepInjections(
      config.home,
      sessionId,
      injections.filter((r) => !settled.includes(r)),
    );
    if (settled.length) log(`${sessionId}: use detection checked ${counted(settled.length, "recalled prompt")}, ${counted(used, "memory", "memories")} used`);
    return { checked: settled.length, used };
  } catch (e) {
    log(`${sessionId}: use detection skipped: ${(e as Error).message}`);
    return { checked: 0, used: 0 };
  }
}
