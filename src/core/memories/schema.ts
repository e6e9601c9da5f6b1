import { type Static, Type } from "@sinclair/typebox";
import { ID_HELP, nullable, sessionDate, text } from "../fields";
import { plural } from "../text";
import { STALE_REASONS } from "./anchors";

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
    session_date: sessionDate(),
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
    project: nullable(text("New project name; null removes the project.")),
    memory_type: Type.Optional(text("New type: knowledge, experience, decisions or learnings.")),
  },
  { additionalProperties: false },
);
export type UpdateInput = Static<typeof UpdateInput>;

/** DELETE /memory and memsvc_delete (REST also takes the id from a JSON body {"id"}). */
export const DeleteInput = Type.Object({ id: memoryId() }, { additionalProperties: false });
export type DeleteInput = Static<typeof DeleteInput>;

/** memsvc_history (GET /memory/history, and with `restore` POST /memory/restore). */
export const HistoryTool = Type.Object(
  {
    id: memoryId(),
    restore: Type.Optional(
      Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "A version number from this tool's list: make that version current again." }),
    ),
  },
  { additionalProperties: false },
);

/** GET /memory/history: memsvc_history without `restore`. */
export const HistoryInput = Type.Pick(HistoryTool, ["id"], { additionalProperties: false });
export type HistoryInput = Static<typeof HistoryInput>;

const VERSION_RULE = "version must be a whole number of at least 1 (see GET /memory/history)";

/** POST /memory/restore: memsvc_history with `restore`. A version in decimal digits as text is taken too (as it always was). */
export const RestoreInput = Type.Object(
  {
    id: memoryId(),
    version: Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: "^\\s*\\d+\\s*$" })], {
      description: "A version number from GET /memory/history.",
      error: VERSION_RULE,
      missing: "version is required (see GET /memory/history)",
    }),
  },
  { additionalProperties: false, unknownKeys: (keys: string[]) => `unknown ${plural(keys.length, "field")} ${keys.join(", ")}: the body is {"id", "version"}` },
);
export type RestoreInput = Static<typeof RestoreInput>;

/** GET /anchors. Blank, over-long or control characters are refused by anchorsForRepo (it trims first). */
export const AnchorsInput = Type.Object(
  { repo: text("The repository as anchors name it (its remote URL without credentials, or its path).") },
  { additionalProperties: false },
);
export type AnchorsInput = Static<typeof AnchorsInput>;

const paths = (what: string) =>
  nullable(Type.Array(Type.String(), { description: `${what} (repository-relative).`, error: "{field} must be an array of paths" }));

/** One memory's mark in POST /memory/stale. Paths and dates are checked by markStale (it normalises them). */
const StaleMarkInput = Type.Object(
  {
    id: text("The memory's id (as GET /anchors lists it)."),
    reason: Type.Union(
      STALE_REASONS.map((r) => Type.Literal(r)),
      {
        description: "Why the memory may be outdated.",
        error: `{field} must be one of ${STALE_REASONS.join(", ")}`,
        missing: `{field} must be one of ${STALE_REASONS.join(", ")}`,
      },
    ),
    changed_paths: paths("Anchored paths that differ between the anchor's commit and HEAD; needed for changed"),
    missing_paths: paths("Anchored paths that no longer exist; needed for missing"),
    commits: nullable(
      Type.Integer({ minimum: 0, description: "Commits since the anchor's commit that touched a changed path.", error: "{field} must be a whole number >= 0" }),
    ),
    last_change: nullable(Type.String({ description: "ISO date of the newest of those commits.", error: "{field} must be an ISO date" })),
  },
  { error: "{field} must be an object" },
);

/** POST /memory/stale: what a client found checking a repository's anchors against git. */
export const MarkStaleInput = Type.Object(
  {
    repo: text("The repository the marks are about."),
    head: nullable(text("The HEAD commit the client compared against.")),
    marks: nullable(
      Type.Array(StaleMarkInput, {
        description: "Memories whose anchored code changed; each replaces its anchor's previous mark.",
        error: "marks must be an array",
      }),
    ),
    fresh: nullable(
      Type.Array(Type.String(), {
        description: "Memory ids whose anchored code is as it was: their marks are cleared.",
        error: "fresh must be an array of memory ids",
      }),
    ),
  },
  {
    additionalProperties: false,
    unknownKeys: (keys: string[]) => `unknown ${plural(keys.length, "field")} ${keys.join(", ")}: the body is {repo, head, marks, fresh}`,
  },
);
export type MarkStaleInput = Static<typeof MarkStaleInput>;

const unknownFilter = (accepted: readonly string[]) => (keys: string[]) =>
  `unknown parameter ${keys
    .slice(0, 3)
    .map((k) => JSON.stringify(k.slice(0, 40)))
    .join(", ")}; accepted: ${accepted.join(", ")}`;

const DATE = "^\\d{4}-\\d{2}-\\d{2}(T[0-9:.]+(Z|[+-]\\d{2}:\\d{2})?)?$";

/**
 * The memory browser's filters: GET /memories/list, GET /memories/count and
 * POST /memories/delete share them (here: shape; list.ts: meaning, e.g. from
 * after to). An empty value is no filter. A misspelt name is refused, never
 * dropped: it would widen a bulk delete.
 */
const FILTERS = {
  query: Type.Optional(Type.String({ maxLength: 2000, description: "Words to search for (results ranked as GET /search ranks them)." })),
  project: Type.Optional(Type.String({ maxLength: 200, description: "Only this project." })),
  type: Type.Optional(
    Type.Union([Type.Literal(""), Type.Literal("knowledge"), Type.Literal("experience"), Type.Literal("decisions"), Type.Literal("learnings")], {
      error: "type must be knowledge, experience, decisions or learnings",
    }),
  ),
  domain: Type.Optional(Type.String({ maxLength: 100, description: "Only this primary domain." })),
  from: Type.Optional(Type.Union([Type.Literal(""), Type.String({ pattern: DATE })], { error: "from must be a date (YYYY-MM-DD) or an ISO time" })),
  to: Type.Optional(Type.Union([Type.Literal(""), Type.String({ pattern: DATE })], { error: "to must be a date (YYYY-MM-DD) or an ISO time" })),
  min_strength: Type.Optional(
    Type.Union([Type.Literal(""), Type.String({ pattern: "^\\s*(\\d+(\\.\\d*)?|\\.\\d+)\\s*$" })], { error: "min_strength must be a number >= 0" }),
  ),
  usage: Type.Optional(
    Type.Union([Type.Literal(""), Type.Literal("never"), Type.Literal("shown"), Type.Literal("used")], { error: "usage must be never, shown or used" }),
  ),
  review: Type.Optional(
    Type.Union([Type.Literal(""), Type.Literal("1"), Type.Literal("0")], {
      description: "1: only memories marked wrong or outdated by feedback and not yet reviewed, rewritten or retired.",
      error: "review must be 1 (only memories needing review) or 0",
    }),
  ),
};
const FILTER_NAMES = Object.keys(FILTERS);

/** GET /memories/list. */
export const BrowseListInput = Type.Object(
  {
    ...FILTERS,
    sort: Type.Optional(
      Type.Union([Type.Literal(""), Type.Literal("relevance"), Type.Literal("importance"), Type.Literal("newest")], {
        error: "sort must be relevance, importance or newest",
      }),
    ),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: "next_cursor of the previous page." })),
    limit: Type.Optional(Type.String({ pattern: "^\\d{1,6}$", error: "limit must be a positive integer" })),
  },
  { additionalProperties: false, unknownKeys: unknownFilter([...FILTER_NAMES, "sort", "cursor", "limit"]) },
);
export type BrowseListInput = Static<typeof BrowseListInput>;

/** GET /memories/count. */
export const BrowseCountInput = Type.Object(FILTERS, { additionalProperties: false, unknownKeys: unknownFilter(FILTER_NAMES) });
export type BrowseCountInput = Static<typeof BrowseCountInput>;
/** GET /memories/detail. */
export const BrowseDetailInput = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 40, description: ID_HELP, error: "id is required: a memory UUID or its first 8 (or more) characters" }) },
  { additionalProperties: false, unknownKeys: unknownFilter(["id"]) },
);

/** POST /memories/delete: the filters and the count the person confirmed (409 with the current count when it differs). */
export const BrowseDeleteInput = Type.Object(
  {
    query: Type.Optional(Type.String({ maxLength: 2000, description: "Words to search for (results ranked as GET /search ranks them)." })),
    project: Type.Optional(Type.String({ maxLength: 200, description: "Only this project." })),
    type: FILTERS.type,
    domain: Type.Optional(Type.String({ maxLength: 100, description: "Only this primary domain." })),
    from: FILTERS.from,
    to: FILTERS.to,
    min_strength: Type.Optional(Type.Number({ minimum: 0, error: "min_strength must be a number >= 0" })),
    usage: FILTERS.usage,
    review: FILTERS.review,
    confirm_count: Type.Integer({
      minimum: 0,
      description: "The number of memories shown for confirmation.",
      error: "confirm_count is required: the number of memories shown for confirmation",
    }),
  },
  {
    additionalProperties: false,
    error: "the body must be a JSON object of filters and confirm_count",
    unknownKeys: unknownFilter([...FILTER_NAMES, "confirm_count"]),
  },
);
export type BrowseDeleteInput = Static<typeof BrowseDeleteInput>;
