import { Type } from "@sinclair/typebox";
import { count, ID_HELP, text } from "../fields";
import { MAX_LIMIT } from "../tuning";
import { GRAPH_DEFAULT_LIMIT } from "./tuning";

export const GRAPH_TOOL_OPS = ["neighbors", "hubs", "path"] as const;

/** memsvc_graph (GET /graph keeps its `op` query, parsed by graphQuery, for now). */
export const GraphTool = Type.Object(
  {
    // `enum` for readers of the schema; the pattern is what the validator enforces.
    operation: Type.String({
        enum: [...GRAPH_TOOL_OPS],
        pattern: `^(${GRAPH_TOOL_OPS.join("|")})$`,
        description: "neighbors, hubs or path.",
        error: (v: unknown) => `operation must be one of "neighbors", "hubs", "path", got ${JSON.stringify(v).slice(0, 40)}: neighbors (needs id), hubs, or path (needs id and target_id)`,
    }),
    id: Type.Optional(text(`${ID_HELP} Required for neighbors and path.`)),
    target_id: Type.Optional(text("The other end of the path (8-character prefix or full UUID). Required for path.")),
    limit: count(`How many memories at most for neighbors and hubs (default ${GRAPH_DEFAULT_LIMIT}).`, MAX_LIMIT),
    domain: Type.Optional(text("Only hubs whose primary domain is this (hubs only).")),
  },
  { additionalProperties: false },
);
