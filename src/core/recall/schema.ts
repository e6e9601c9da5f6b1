import { type Static, Type } from "@sinclair/typebox";
import { nullable, text } from "../fields";

/** POST /recall-index. Blank or over-long session ids are refused by recallIndex (it trims first). */
export const RecallIndexInput = Type.Object(
  {
    session_id: text("The agent session: shown memories are suppressed for about 30 turns of it."),
    prompt: nullable(text("The user's prompt; memories relevant to it are listed.")),
    reset: nullable(
      Type.Boolean({ description: "true at session start or compaction: forget what this session was shown.", error: "reset must be true or false" }),
    ),
    project: nullable(text("Project name, pushed into retrieval.")),
    privacy: Type.Optional(Type.Unknown({ description: "Deprecated: accepted and ignored." })),
    agent: nullable(
      text("The harness asking (claude-code, codex, gemini-cli, opencode...): its token budget (recall.maxTokensByHarness) applies, and its receipts name it."),
    ),
  },
  { additionalProperties: false },
);
export type RecallIndexInput = Static<typeof RecallIndexInput>;

/** POST /recall-index query: `explain=true` returns the answer's receipt with it. */
export const RecallIndexQuery = Type.Object(
  {
    explain: Type.Optional(
      Type.Union([Type.Literal("true"), Type.Literal("false"), Type.Literal("1"), Type.Literal("0")], {
        error: "explain must be true or false",
        description: "true: the answer carries its receipt (`explain`): score parts, tokens, near misses.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type RecallIndexQuery = Static<typeof RecallIndexQuery>;
