/**
 * The memory graph: links made at ingest, neighbour lists, export, path search.
 */

/** A new memory links to at most this many of its nearest neighbours (above the `link` threshold). */
export const LINK_MAX_NEAREST = 3;

/** REST neighbors/hubs and memsvc_graph list this many memories unless told (the tool's spec default). */
export const GRAPH_DEFAULT_LIMIT = 10;

/** Graph export slice (spec): default and hard cap of nodes; beyond ~10k a browser layout stalls. */
export const GRAPH_EXPORT_DEFAULT_LIMIT = 5000;
export const GRAPH_EXPORT_MAX_LIMIT = 10_000;

/** Export nodes carry this much content (hover text, search); the page loads the rest on click. */
export const GRAPH_PREVIEW_CHARS = 200;

/** Path search gives up past this many hops: longer chains say little about how two memories relate. */
export const GRAPH_PATH_MAX_HOPS = 6;

/** ...or once this many memories were reached, so one query cannot walk a huge store for long. */
export const GRAPH_PATH_MAX_VISITED = 50_000;
