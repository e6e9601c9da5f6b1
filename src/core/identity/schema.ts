import { type Static, Type } from "@sinclair/typebox";
import { text } from "../fields";
import { plural } from "../text";
import { NAME_MAX, NAME_PATTERN } from "./files";

/** memsvc_identity. */
export const IdentityTool = Type.Object(
  { name: Type.Optional(text("One section's name (e.g. soul, memory); omit for all sections.")) },
  { additionalProperties: false },
);

/**
 * GET and PUT /identity (and /context). The legacy project, limit and privacy
 * parameters of the old GET /context are refused by parseIdentityQuery with
 * a pointer to /recent: they are read from the query as sent (see the route).
 */
export const IdentityQuery = Type.Object(
  { agent: Type.Optional(text("An agent id: its own sections merged over the global ones (its mode decides how); omit for the global scope.")) },
  { additionalProperties: false },
);
export type IdentityQuery = Static<typeof IdentityQuery>;

const SHAPE = 'the body must be {"sections": {"<name>": "<markdown>", ...}}';

/** PUT /identity: a partial upsert. Names, the reserved `memory` section and sizes are checked by parseSections, all before anything is written. */
export const IdentityPutInput = Type.Object(
  {
    sections: Type.Record(Type.String(), Type.Unknown({ description: "The section's Markdown." }), {
      description: `Section name to its Markdown; names match ${NAME_PATTERN.source}, at most ${NAME_MAX} characters.`,
      error: SHAPE,
      missing: SHAPE,
    }),
  },
  {
    additionalProperties: false,
    unknownKeys: (keys: string[]) =>
      `unknown ${plural(keys.length, "field")} ${keys.join(", ")}: ${SHAPE} (the agent scope is the query parameter ?agent=<id>)`,
  },
);
export type IdentityPutInput = Static<typeof IdentityPutInput>;
