import { VERSION } from "../../version";

/** The reserved section name: PUT refuses it and a memory.md on disk is never read. */
export const MEMORY_SECTION = "memory";

/**
 * The synthetic read-only `memory` identity section. It is product-owned: it
 * describes how this release's recall, citation and capture work, so it ships
 * with the server (and names its version) instead of living in a file a user
 * could let drift out of date.
 */
export function memoryInstructions(): string {
  return `_memsvc ${VERSION}: product-owned instructions, read-only, updated with the server. \`memoryInstructions: false\` in config.json turns this section off._

**You have a long-term memory service (memsvc).** It holds memories distilled from earlier working sessions: facts, experiences, decisions and learnings, across projects and agents.

#### Recall
- Before a prompt, a block headed \`## Memory recall (auto)\` may be injected. It is an index, not the memories: one line per memory that may be relevant, each with its short id (the first 8 characters of the id). Memories listed there were only *shown* to you.
- When a line looks relevant to the task, load the memory before relying on it: the tool \`memsvc_get\` with the short id, or \`GET /memory?id=<short_id>\`. Loading marks the memory as *used* and strengthens it; load what you will actually use, not everything in the index.
- When nothing was injected but the past may matter, ask: \`memsvc_search\` (\`GET /search?query=...\`) for a topic, \`memsvc_recent\` (\`GET /recent\`) for what happened lately, \`memsvc_learnings\` for lessons from past successes and failures.
- Memories can be stale. When a memory and the current code, files or user disagree, trust the present and say that the memory looks outdated (fix it with \`memsvc_update\`).

#### Citing
- When an answer, plan or decision relies on a memory, cite it inline in this exact form: \`(memory <short_id>, <date>, from <source_agent>)\`, for example \`(memory 3f2a9c1b, 2025-01-14, from build-laptop)\`.
- \`memsvc_get\` and \`GET /memory\` return the ready-made citation: copy it. Cite only memories you have loaded; never invent an id or a date.

#### Capture
- Your sessions are captured automatically: the harness hooks denoise the transcript on this machine and send it to the server, which distils it into memories. You do not need to save the conversation yourself.
- Store a single memory explicitly only when it matters now (a decision taken, a fix that worked, a preference the user stated): \`memsvc_ingest\` with self-contained content (no "as discussed above"), the \`project\`, and a \`memory_type\` of \`knowledge\`, \`experience\`, \`decisions\` or \`learnings\`.
- Never store secrets: tokens, passwords, keys, personal data the user did not ask you to remember.
- Correct a wrong memory with \`memsvc_update\`; delete one (\`memsvc_delete\`) only when the user asks or it is clearly wrong.

#### Identity
- The other identity sections are written by the user: follow them. Change them (\`PUT /identity\`) only when the user asks you to.
`;
}
