import { type Static, Type } from "@sinclair/typebox";
import { count, ID_HELP, text } from "../fields";
import { MAX_LIMIT } from "../tuning";
import { GRAPH_DEFAULT_LIMIT } from "./tuning";
import { GRAPH_OPS } from "./ops";

export const GRAPH_TOOL_OPS = ["neighbors", "hubs", "path"] as const;

/**
 * memsvc_graph. GET /graph is GraphInput below: the spec names the tool's
 * fields (operation) and the route's (op) differently, and only the route
 * has export.
 */
export const GraphTool = Type.Object(
  {
    // `enum` for readers of the schema; the pattern is what the validator enforces.
    operation: Type.String({
      enum: [...GRAPH_TOOL_OPS],
      pattern: `^(${GRAPH_TOOL_OPS.join("|")})$`,
      description: "neighbors, hubs or path.",
      error: (v: unknown) =>
        `operation must be one of "neighbors", "hubs", "path", got ${JSON.stringify(v).slice(0, 40)}: neighbors (needs id), hubs, or path (needs id and target_id)`,
    }),
    id: Type.Optional(text(`${ID_HELP} Required for neighbors and path.`)),
    target_id: Type.Optional(text("The other end of the path (8-character prefix or full UUID). Required for path.")),
    limit: count(`How many memories at most for neighbors and hubs (default ${GRAPH_DEFAULT_LIMIT}).`, MAX_LIMIT),
    domain: Type.Optional(text("Only hubs whose primary domain is this (hubs only).")),
  },
  { additionalProperties: false },
);

const param = (description: string) => Type.Optional(text(description));

/**
 * GET /graph: one query, `op` choosing the operation. Which parameters each
 * op takes is checked on the query as sent (checkGraphQuery: a misspelt
 * filter is refused, never dropped); values are read by the op's function.
 */
export const GraphInput = Type.Object(
  {
    op: Type.Union(
      GRAPH_OPS.map((op) => Type.Literal(op)),
      { description: "neighbors (id, limit, relationship), hubs (limit, domain), path (id, target_id) or export (domain, type, tag, minStrength, limit)." },
    ),
    id: param(`${ID_HELP} neighbors and path.`),
    target_id: param("The other end of the path (8-character prefix or full UUID). path only."),
    limit: param(`How many at most (default ${GRAPH_DEFAULT_LIMIT}; export: every matching memory up to its cap).`),
    relationship: param("Only links of this relationship (neighbors)."),
    domain: param("Only this primary domain (hubs, export)."),
    type: param("Only this memory type (export)."),
    tag: param("Only memories with this tag (export)."),
    minStrength: param("Only memories at least this strong, a number >= 0 (export)."),
  },
  { additionalProperties: false },
);
export type GraphInput = Static<typeof GraphInput>;
