import { type Static, Type } from "@sinclair/typebox";
import { nullable, sessionDate, text } from "../fields";

const MESSAGE = "messages must be an array of {role, content} objects";

/**
 * POST /distill. Meaning (trimmed lengths, one of text or messages, a
 * segment needing its session, dates, anchors) is checked by distill, which
 * names the rule it applies. Fields it does not know are ignored, as always.
 */
export const DistillInput = Type.Object({
  text: nullable(text("The session transcript as one text.")),
  messages: nullable(
    Type.Array(
      Type.Object(
        {
          role: text("Who spoke: user, assistant, tool_result...", { error: "{field} must be a string", missing: "{field} must be a string" }),
          content: text("What was said.", { error: "{field} must be a string", missing: "{field} must be a string" }),
        },
        { error: "{field} must be an object {role, content}" },
      ),
      { description: "The session as messages (instead of text, or before it).", error: MESSAGE },
    ),
  ),
  session_id: nullable(text("The agent session (at most 500 characters): a second distill of it is skipped.")),
  segment_id: nullable(text("A part of the session (needs session_id): the dedup key becomes <session_id>#<segment_id>.")),
  session_date: sessionDate(),
  source_agent: nullable(text("Agent identifier (default unknown).")),
  source_agent_id: nullable(text("The agent's own id (a subagent, a named instance).")),
  source_domain: nullable(text("Where the agent worked (a host, a team).")),
  project: nullable(text("Project the memories belong to.")),
  anchors: Type.Optional(Type.Unknown({ description: "The code the session worked on: {repo, branch, commit, paths}." })),
  privacy: Type.Optional(Type.Unknown({ description: "Deprecated: accepted and ignored." })),
});
export type DistillInput = Static<typeof DistillInput>;
