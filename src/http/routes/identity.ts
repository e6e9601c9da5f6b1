import { Elysia } from "elysia";
import appJs from "../../../assets/identity/app.js" with { type: "file" };
import indexHtml from "../../../assets/identity/index.html" with { type: "file" };
import styleCss from "../../../assets/identity/style.css" with { type: "file" };
import { AppError, notFound } from "../../errors";
import { getIdentity, putIdentity } from "../../core/identity";
import type { Services } from "../../core/services";
import { objectBody, queryParams } from "../body";
import { fileResponse } from "../pages";

/** The editor's static files, served under /assets/identity/ (public, like every page asset). */
// With `type: "file"` Bun yields the file's path; bun-types describe *.html imports as HTML bundles.
const INDEX_HTML = indexHtml as unknown as string;

const PAGE_FILES: Readonly<Record<string, string>> = { "app.js": appJs, "style.css": styleCss };

/** /identity and its backcompat alias /context: the same handlers on both paths. */
export function identityRoutes(s: Services) {
  const read = ({ query }: { query: Record<string, unknown> }) => getIdentity(s, queryParams(query));
  const write = ({ query, body }: { query: Record<string, unknown>; body: unknown }) => putIdentity(s, objectBody(body), queryParams(query));
  const noDelete = () => {
    throw new AppError("method_not_allowed", `identity sections are deleted on the filesystem only: remove <home>/identity/<name>.md (or agents/<id>/<name>.md); use GET or PUT here`);
  };
  return new Elysia({ name: "identity" })
    .get("/identity", read)
    .put("/identity", write)
    .delete("/identity", noDelete)
    .get("/context", read)
    .put("/context", write)
    .delete("/context", noDelete)
    .get("/identity/ui", () => fileResponse(INDEX_HTML, "index.html"))
    .get("/assets/identity/:name", ({ params }) => {
      const path = Object.hasOwn(PAGE_FILES, params.name) ? PAGE_FILES[params.name] : undefined;
      if (!path) throw notFound(`no asset identity/${params.name}`);
      return fileResponse(path, params.name);
    });
}
