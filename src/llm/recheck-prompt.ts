import type { ChatMessage } from "./client";

/**
 * The nightly re-check prompt: one memory whose code changed since it was
 * written, the session lines it was drawn from, and what changed (paths,
 * commit count, last change date; the server never has source code) in; a
 * verdict out.
 */
export const RECHECK_SYSTEM_PROMPT = `You keep a software agent's long-term memory accurate. A memory was written from a working session and anchored to files of a git repository; those files have changed since (or are gone). You get the memory, the session lines it was drawn from, and what changed: file paths, how many commits touched them and when. You do not get the code.

Decide one verdict:
- confirm: the memory still holds as written (it is about something the changes plausibly leave alone, or it records a decision or an experience that stays true as history).
- rewrite: the memory is still useful but should be stated so that it stays true, e.g. naming the files that were removed as removed, or dating a statement ("as of <date>, ..."). Give the full new text in "content": complete sentences, only what the session lines and the changes support; never invent code facts.
- retire: the memory is no longer worth keeping: it only describes code that is gone, or the changes make it misleading and nothing true remains to say.
When unsure, confirm: the memory stays marked as possibly outdated only until the next change.

Answer with one JSON object and nothing else:
{"verdict": "confirm" | "rewrite" | "retire", "content": "the new text, for rewrite only", "reason": "one sentence"}`;

export interface RecheckPromptInput {
  content: string;
  memoryType: string;
  date: string;
  /** One block per marked anchor: repository, what changed. */
  changes: string[];
  evidence: string[];
}

export function recheckMessages(m: RecheckPromptInput): ChatMessage[] {
  return [
    { role: "system", content: RECHECK_SYSTEM_PROMPT },
    {
      role: "user",
      content: [
        `Memory (${m.memoryType}, written ${m.date}):\n<memory>\n${m.content}\n</memory>`,
        `Session lines it was drawn from:\n<evidence>\n${m.evidence.join("\n---\n")}\n</evidence>`,
        `What changed since:\n${m.changes.join("\n")}`,
      ].join("\n\n"),
    },
  ];
}
