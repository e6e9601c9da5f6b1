import type { ChatMessage } from "./client";

/**
 * The distill prompt. The model reads one chunk of a denoised agent session
 * and answers a JSON object; anything around it (fences, prose) is tolerated
 * by the lenient parser, but the prompt asks for the object alone.
 */
export const DISTILL_SYSTEM_PROMPT = `You distil the working session of a software agent into long-term memories.

A memory is one self-contained statement that will still be useful to an agent weeks later, without the session at hand:
- knowledge: a fact about a project, system, tool, API or person ("The staging database listens on port 5433 behind pgbouncer.")
- experience: what was tried and what happened, including failures and their cause
- decisions: a choice that was made and why
- learnings: a rule of thumb for next time, drawn from a success or a failure

Rules:
- Write each memory as complete Markdown sentences with the names, paths, versions and numbers that make it useful. Never write "the user", "this session" or "as discussed" without saying what.
- Keep only what is durable. Skip greetings, acknowledgements, progress chatter ("let me check"), tool output and anything only true for a moment.
- Never copy secrets, passwords, tokens or keys, even if they appear; text like [REDACTED:...] marks one that was removed.
- Fewer, denser memories beat many thin ones. An empty list is a fine answer when nothing durable happened.
- tags: 1 to 4 short lower-case topic names (e.g. "postgres", "deployment", "auth"), most central first.
- evidence: 1 to 3 lines of the transcript that the memory rests on, copied verbatim (it is checked against the code later; quote, do not paraphrase).
- relationships: optional links from this memory to another one, "to" being either the index (0-based) of another memory in your reply or the id of an existing memory listed by the user, and "type" one of: related, caused_by, fixes, supersedes, contradicts, part_of, depends_on, example_of.

Answer with one JSON object and nothing else:
{"memories": [{"content": "...", "memory_type": "knowledge|experience|decisions|learnings", "tags": ["..."], "evidence": ["..."], "relationships": [{"to": 0, "type": "related"}]}]}`;

export interface DistillPromptContext {
  project: string | null;
  /** ISO date of the session. */
  sessionDate: string;
  chunkIndex: number;
  chunkCount: number;
  /** Existing memories the model may link to, by short id. */
  existing: readonly { shortId: string; content: string }[];
}

/** Characters the prompt adds around a chunk, for the chunk budget (existing memories excluded). */
export const DISTILL_PROMPT_OVERHEAD = DISTILL_SYSTEM_PROMPT.length + 400;

/** Most characters of one existing memory shown to the model. */
const EXISTING_PREVIEW_CHARS = 300;

export function distillMessages(chunk: string, ctx: DistillPromptContext): ChatMessage[] {
  const header = [
    `Project: ${ctx.project ?? "(none)"}`,
    `Session date: ${ctx.sessionDate}`,
    ctx.chunkCount > 1 ? `This is part ${ctx.chunkIndex + 1} of ${ctx.chunkCount} of the session.` : null,
  ].filter(Boolean);
  const existing = ctx.existing.length
    ? `Existing memories you may link to (by id):\n${ctx.existing.map((e) => `- ${e.shortId}: ${oneLine(e.content)}`).join("\n")}\n\n`
    : "";
  return [
    { role: "system", content: DISTILL_SYSTEM_PROMPT },
    { role: "user", content: `${header.join("\n")}\n\n${existing}Session transcript:\n<transcript>\n${chunk}\n</transcript>` },
  ];
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > EXISTING_PREVIEW_CHARS ? `${flat.slice(0, EXISTING_PREVIEW_CHARS)}…` : flat;
}

/** Characters the existing-memory list adds to a prompt. */
export function existingBlockChars(count: number): number {
  return count * (EXISTING_PREVIEW_CHARS + 20) + 60;
}
