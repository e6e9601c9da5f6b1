import { type Static, Type } from "@sinclair/typebox";
import { nullable, text } from "../fields";

/** POST /recall-index. Blank or over-long session ids are refused by recallIndex (it trims first). */
export const RecallIndexInput = Type.Object(
  {
    session_id: text("The agent session: shown memories are suppressed for about 30 turns of it."),
    prompt: nullable(text("The user's prompt; memories relevant to it are listed.")),
    reset: nullable(Type.Boolean({ description: "true at session start or compaction: forget what this session was shown.", error: "reset must be true or false" })),
    project: nullable(text("Project name, pushed into retrieval.")),
    privacy: Type.Optional(Type.Unknown({ description: "Deprecated: accepted and ignored." })),
  },
  { additionalProperties: false },
);
export type RecallIndexInput = Static<typeof RecallIndexInput>;
