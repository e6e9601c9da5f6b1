import type { TObject } from "@sinclair/typebox";
import { Elysia } from "elysia";
import appJs from "../../../assets/memories/app.js" with { type: "file" };
import indexHtml from "../../../assets/memories/index.html" with { type: "file" };
import styleCss from "../../../assets/memories/style.css" with { type: "file" };
import { memoryDetail } from "../../core/memories";
import { countSelection, deleteSelection, listFacets, listMemories } from "../../core/browse";
import type { Services } from "../../core/services";
import { scopedConnections } from "../../core/graph";
import { BrowseCountInput, BrowseDeleteInput, BrowseDetailInput, BrowseListInput } from "../../core/memories/schema";
import { unknownKeysProblem } from "../../core/validate";
import { invalid, notFound } from "../../errors";
import { jsonObject } from "../body";
import { sentQuery } from "../schema-query";
import { fileResponse } from "../pages";
import { scopeOf } from "../access";

// With `type: "file"` Bun yields the file's path; bun-types describe *.html imports as HTML bundles.
const INDEX_HTML = indexHtml as unknown as string;
const PAGE_FILES: Readonly<Record<string, string>> = { "app.js": appJs, "style.css": styleCss };

/**
 * A query checked as sent ("" kept: an empty filter is no filter): a
 * misspelt filter is refused before Elysia would drop it, since it would
 * widen a bulk delete.
 */
const browseQuery = <T extends TObject>(schema: T) => ({
  query: schema,
  transform: ({ request, query }: { request: Request; query: Record<string, unknown> }) => {
    const sent = sentQuery(request);
    const unknown = unknownKeysProblem(schema, sent);
    if (unknown) throw invalid(unknown);
    for (const key of Object.keys(query)) delete query[key];
    Object.assign(query, sent);
  },
});
/**
 * The memory browser: its page shell (public, holds no data) and the reads
 * and bulk delete it uses (bearer token, like every data route).
 */
export function browserRoutes(s: Services) {
  return new Elysia({ name: "memory-browser" })
    .get("/memories", () => fileResponse(INDEX_HTML, "index.html"))
    .get("/assets/memories/:name", ({ params }) => {
      const path = Object.hasOwn(PAGE_FILES, params.name) ? PAGE_FILES[params.name] : undefined;
      if (!path) throw notFound(`no asset memories/${params.name.slice(0, 80)}`);
      return fileResponse(path, params.name);
    })
    .get(
      "/memories/list",
      async ({ query, request }) => {
        const r = await listMemories(s, query);
        await scopedConnections(s, scopeOf(request), r.items);
        return r;
      },
      browseQuery(BrowseListInput),
    )
    .get("/memories/facets", ({ request }) => listFacets(s, scopeOf(request)))
    .get("/memories/count", ({ query }) => countSelection(s, query), browseQuery(BrowseCountInput))
    .get(
      "/memories/detail",
      async ({ query, request }) => {
        const d = await memoryDetail(s, query.id, scopeOf(request));
        await scopedConnections(s, scopeOf(request), [d.memory]);
        return d;
      },
      browseQuery(BrowseDetailInput),
    )
    .post("/memories/delete", ({ body }) => deleteSelection(s, body), jsonObject(BrowseDeleteInput));
}
