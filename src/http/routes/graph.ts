import { Elysia } from "elysia";
import threeDForceGraph from "../../../node_modules/3d-force-graph/dist/3d-force-graph.min.js" with { type: "file" };
import forceGraph from "../../../node_modules/force-graph/dist/force-graph.min.js" with { type: "file" };
import vizApp from "../../../assets/viz/app.js" with { type: "file" };
import vizDetail from "../../../assets/viz/detail.js" with { type: "file" };
import vizView from "../../../assets/viz/graph-view.js" with { type: "file" };
import vizLinks from "../../../assets/viz/link-batch.js" with { type: "file" };
import vizHtmlImport from "../../../assets/viz/index.html" with { type: "file" };
import vizCss from "../../../assets/viz/style.css" with { type: "file" };
import { checkGraphQuery, graphQuery } from "../../core/graph";
import { GraphInput } from "../../core/graph/schema";
import type { Services } from "../../core/services";
import { notFound } from "../../errors";
import { sentQuery } from "../schema-query";
import { fileResponse } from "../pages";
import { scopeOf } from "../access";

// bun-types call an .html import an HTMLBundle; imported as a file it is a path.
const vizHtml = vizHtmlImport as unknown as string;

/**
 * The only files /viz/vendor/ serves: rendering libraries from npm, embedded
 * in the binary. A request names a key of this map, never a path.
 */
export const VIZ_VENDOR: Readonly<Record<string, string>> = {
  "3d-force-graph.min.js": threeDForceGraph,
  "force-graph.min.js": forceGraph,
};

/** The page's own script and style (public, like every page asset). */
const VIZ_ASSETS: Readonly<Record<string, string>> = {
  "app.js": vizApp,
  "detail.js": vizDetail,
  "graph-view.js": vizView,
  "link-batch.js": vizLinks,
  "style.css": vizCss,
};

const pick = (map: Readonly<Record<string, string>>, name: string, where: string) => {
  if (!Object.hasOwn(map, name)) throw notFound(`no file ${where}${name.slice(0, 80)}`);
  return fileResponse(map[name], name);
};

/** The op and its parameters are checked on the query as sent (first of repeats, "" kept), before Elysia drops unknown names. */
const GRAPH_QUERY = {
  query: GraphInput,
  transform: ({ request, query }: { request: Request; query: Record<string, unknown> }) => {
    const sent = sentQuery(request);
    checkGraphQuery(sent);
    for (const key of Object.keys(query)) delete query[key];
    Object.assign(query, sent);
  },
};

export function graphRoutes(s: Services) {
  return new Elysia({ name: "graph" })
    .get("/graph", ({ query, request }) => graphQuery(s, query, scopeOf(request)), GRAPH_QUERY)
    .get("/viz", () => fileResponse(vizHtml, "index.html"))
    .get("/viz/vendor/:file", ({ params }) => pick(VIZ_VENDOR, params.file, "/viz/vendor/"))
    .get("/assets/viz/:file", ({ params }) => pick(VIZ_ASSETS, params.file, "/assets/viz/"));
}
