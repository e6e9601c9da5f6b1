// What other parts of memsvc use from graph/: explicit named exports only.
export { exportGraph } from "./export";
export { checkGraphQuery, graphQuery, hubs, neighbors, path } from "./graph";
export { addLink, insertAndLink, linkToNearest, normalizeRelationship } from "./links";
export { scopedConnections } from "./nodes";
export { hubsText, neighborsText, pathText } from "./text";
export type { ExportSlice, GraphAt, GraphMemoryRow, GraphStore, LinkAround, LinkOf, NewLink } from "./store";
