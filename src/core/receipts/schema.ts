import { type Static, Type } from "@sinclair/typebox";
import { ID_HELP, count, nullable, project, text } from "../fields";
import { RECEIPT_PAGE_MAX } from "./tuning";

const FEEDBACK = "wrong, outdated, useful or irrelevant";

/** GET /recall/receipts and `memsvc why`. */
export const ReceiptsQuery = Type.Object(
  {
    session_id: Type.Optional(text("Only this session's receipts.")),
    agent: Type.Optional(text("Only this agent's (harness or MCP client name).")),
    project: project("Only receipts of this project."),
    kind: Type.Optional(
      Type.Union([Type.Literal("recall"), Type.Literal("search")], {
        error: "kind must be recall or search",
        description: "recall (/recall-index answers) or search (agent searches).",
      }),
    ),
    memory: Type.Optional(text("Only receipts that injected this memory (id or its first 8 characters).")),
    before: Type.Optional(text("Paging: the `next` value of the previous page.")),
    limit: count(`How many receipts at most (default 20).`, RECEIPT_PAGE_MAX),
  },
  { additionalProperties: false },
);
export type ReceiptsQuery = Static<typeof ReceiptsQuery>;

/** GET /recall/sessions (the sessions page). */
export const SessionsQuery = Type.Object(
  {
    before: Type.Optional(text("Paging: the `next` value of the previous page.")),
    limit: count("How many sessions at most (default 50).", RECEIPT_PAGE_MAX),
  },
  { additionalProperties: false },
);
export type SessionsQuery = Static<typeof SessionsQuery>;

/** POST /recall/used: the capture client's use detection. */
export const UsedInput = Type.Object(
  {
    receipt: nullable(text("The receipt of the prompt whose block injected them (`explain.id` of its /recall-index answer).")),
    session_id: nullable(text("Or the session: each id counts on the newest receipt of the session that injected it.")),
    ids: Type.Array(Type.String(), {
      description: "Memories of that block the agent's following turns relied on (full ids).",
      maxItems: 50,
      error: "ids must be an array of at most 50 memory ids",
    }),
  },
  { additionalProperties: false },
);
export type UsedInput = Static<typeof UsedInput>;

/** POST /feedback and memsvc_feedback. */
export const FeedbackInput = Type.Object(
  {
    id: text(ID_HELP),
    kind: Type.Union([Type.Literal("wrong"), Type.Literal("outdated"), Type.Literal("useful"), Type.Literal("irrelevant")], {
      error: `kind must be one of ${FEEDBACK}`,
      description:
        "wrong: it misled (out of recall at once, marked for review); outdated: it was true once (a stale mark with the note); irrelevant: not about prompts like this one (demoted for them only); useful: it helped (counts as a use).",
    }),
    note: nullable(text("What is wrong or outdated about it, in a sentence (shown in the memory browser and beside the memory).")),
    receipt: nullable(text("The receipt it was shown in (GET /recall/receipts): irrelevant takes that prompt; by default its latest showing.")),
    prompt: nullable(text("irrelevant: the prompt it is irrelevant to, when no receipt keeps one.")),
  },
  { additionalProperties: false },
);
export type FeedbackInput = Static<typeof FeedbackInput>;

/** POST /memory/review: the pages' retire, unretire and review actions. */
export const ReviewInput = Type.Object(
  {
    id: text(ID_HELP),
    action: Type.Union([Type.Literal("retire"), Type.Literal("unretire"), Type.Literal("review")], {
      error: "action must be retire, unretire or review",
      description: "retire: out of recall and search, kept with its history; unretire: back; review: settles its wrong and outdated marks.",
    }),
    note: nullable(text("Why, in a sentence.")),
  },
  { additionalProperties: false },
);
export type ReviewInput = Static<typeof ReviewInput>;
