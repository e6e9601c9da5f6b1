import type { ChatMessage } from "./client";

/**
 * The nightly consolidation prompt: one day's memories of one project in,
 * actionable learnings out, each grounded in the memories it came from.
 */
export const LEARNINGS_SYSTEM_PROMPT = `You review one day of a software agent's memories and write down what it should do differently, or keep doing, next time.

A learning is an actionable rule drawn from a success or a failure in these memories:
- It says what to do (or avoid), when, and why, with the concrete names, commands, paths, versions or numbers that make it usable ("Run the migrations with --lock-timeout=5s on the orders database: without it the deploy of 2024-03-02 blocked writes for 4 minutes.").
- It is grounded: "sources" lists the numbers of the memories it is drawn from (at least one).
- It is not a restatement of a single fact, a summary of the day, or generic advice ("write tests", "be careful").
- Fewer, sharper learnings beat many. An empty list is the right answer when the day holds no lesson.
- tags: 1 to 3 short lower-case topic names, most central first.

Answer with one JSON object and nothing else:
{"learnings": [{"content": "...", "sources": [1, 3], "tags": ["..."]}]}`;

/** Characters the prompt adds around the memories, for the context budget. */
export const LEARNINGS_PROMPT_OVERHEAD = LEARNINGS_SYSTEM_PROMPT.length + 300;

export interface LearningsPromptMemory {
  shortId: string;
  memoryType: string;
  date: string;
  content: string;
}

export function learningsMessages(day: string, project: string | null, memories: readonly LearningsPromptMemory[]): ChatMessage[] {
  const list = memories.map((m, i) => `[${i + 1}] (${m.memoryType}, ${m.date}, id ${m.shortId})\n${m.content}`).join("\n\n");
  return [
    { role: "system", content: LEARNINGS_SYSTEM_PROMPT },
    { role: "user", content: `Day: ${day}\nProject: ${project ?? "(none)"}\n\nMemories:\n<memories>\n${list}\n</memories>` },
  ];
}
