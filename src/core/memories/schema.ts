import { type Static, Type } from "@sinclair/typebox";
import { ID_HELP, nullable, text } from "../fields";

const memoryId = () => text(ID_HELP);
const MEMORY_TYPES = "knowledge, experience, decisions or learnings (legacy: fact, episode, decision, lesson)";

/** GET /memory; memsvc_get takes its `id` (MemoryGetTool). */
export const MemoryGetInput = Type.Object(
  {
    id: memoryId(),
    evidence: Type.Optional(
      Type.Union([Type.Literal("true"), Type.Literal("false"), Type.Literal("1"), Type.Literal("0"), Type.Literal("")], {
        description: "true: also return the transcript excerpts the memory was distilled from.",
        error: "evidence must be true or false",
      }),
    ),
  },
  { additionalProperties: false },
);
export type MemoryGetInput = Static<typeof MemoryGetInput>;
export const MemoryGetTool = Type.Pick(MemoryGetInput, ["id"], { additionalProperties: false });

/**
 * POST /ingest. Meaning (trimming, the content limit, type names, dates, the
 * anchors object) is checked by ingestMemory, which names the rule it applies.
 */
export const IngestInput = Type.Object(
  {
    content: text("The memory, self-contained Markdown."),
    source_agent: nullable(text("Agent identifier (default unknown).")),
    project: nullable(text("Project the memory belongs to.")),
    memory_type: nullable(text(`${MEMORY_TYPES}. Default experience.`)),
    privacy: nullable(text("Deprecated: PUBLIC, WORK (default), PERSONAL or SENSITIVE.")),
    source_session: nullable(text("Session id: a second ingest for the same session is skipped.")),
    session_date: nullable(text("ISO date of the session (default now).")),
    anchors: Type.Optional(Type.Unknown({ description: "The code the memory is about: {repo, branch, commit, paths}." })),
  },
  { additionalProperties: false },
);
export type IngestInput = Static<typeof IngestInput>;

/** memsvc_ingest: the fields of POST /ingest an agent sets (its client name is the source agent). */
export const IngestTool = Type.Object(
  {
    content: IngestInput.properties.content,
    project: Type.Optional(IngestInput.properties.project.anyOf[0]),
    memory_type: Type.Optional(IngestInput.properties.memory_type.anyOf[0]),
  },
  { additionalProperties: false },
);

/** PATCH /memory and memsvc_update. */
export const UpdateInput = Type.Object(
  {
    id: memoryId(),
    content: Type.Optional(text("New full content (Markdown); replaces the old text.")),
    project: Type.Optional(text("New project name.")),
    memory_type: Type.Optional(text("New type: knowledge, experience, decisions or learnings.")),
  },
  { additionalProperties: false },
);
export type UpdateInput = Static<typeof UpdateInput>;

/** DELETE /memory and memsvc_delete. */
export const DeleteInput = Type.Object({ id: memoryId() }, { additionalProperties: false });

/** memsvc_history (GET /memory/history, and with `restore` POST /memory/restore). */
export const HistoryTool = Type.Object(
  {
    id: memoryId(),
    restore: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "A version number from this tool's list: make that version current again." })),
  },
  { additionalProperties: false },
);
