/** The operations of GET /graph (a leaf module: the schema and graph.ts both read it). */
export const GRAPH_OPS = ["neighbors", "hubs", "path", "export"] as const;
export type GraphOp = (typeof GRAPH_OPS)[number];
