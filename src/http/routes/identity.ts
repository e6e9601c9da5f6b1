import { Elysia } from "elysia";
import appJs from "../../../assets/identity/app.js" with { type: "file" };
import indexHtml from "../../../assets/identity/index.html" with { type: "file" };
import styleCss from "../../../assets/identity/style.css" with { type: "file" };
import { AppError, notFound } from "../../errors";
import { getIdentity, putIdentity } from "../../core/identity";
import type { Services } from "../../core/services";
import { IdentityPutInput, IdentityQuery } from "../../core/identity/schema";
import { parseIdentityQuery } from "../../core/identity";
import { jsonObject, objectBody } from "../body";
import { sentQuery } from "../schema-query";
import { fileResponse } from "../pages";

/** The editor's static files, served under /assets/identity/ (public, like every page asset). */
// With `type: "file"` Bun yields the file's path; bun-types describe *.html imports as HTML bundles.
const INDEX_HTML = indexHtml as unknown as string;

const PAGE_FILES: Readonly<Record<string, string>> = { "app.js": appJs, "style.css": styleCss };

/**
 * The query is read as sent, "" kept: `?project=` is refused and `?agent=`
 * is an invalid id, as they always were. The legacy parameters (project,
 * limit, privacy: 400 pointing at /recent) are read before Elysia drops the
 * names the schema does not know.
 */
const identityQuery = (verb: "GET" | "PUT") => ({
  query: IdentityQuery,
  transform: ({ request, query }: { request: Request; query: Record<string, unknown> }) => {
    const sent = sentQuery(request);
    parseIdentityQuery(sent, verb);
    if (sent.agent !== undefined) query.agent = sent.agent;
  },
});
const READ = identityQuery("GET");
// The checks in the order they always ran: a JSON object, then the query, then the body's fields.
const WRITE = {
  ...jsonObject(IdentityPutInput),
  query: IdentityQuery,
  transform: ({ request, query, body }: { request: Request; query: Record<string, unknown>; body: unknown }) => {
    objectBody(body);
    identityQuery("PUT").transform({ request, query });
    jsonObject(IdentityPutInput).transform({ body, query });
  },
};

/** /identity and its backcompat alias /context: the same handlers on both paths. */
export function identityRoutes(s: Services) {
  const read = ({ query }: { query: IdentityQuery }) => getIdentity(s, query);
  const write = ({ query, body }: { query: IdentityQuery; body: IdentityPutInput }) => putIdentity(s, body, query);
  const noDelete = () => {
    throw new AppError(
      "method_not_allowed",
      `identity sections are deleted on the filesystem only: remove <home>/identity/<name>.md (or agents/<id>/<name>.md); use GET or PUT here`,
    );
  };
  return new Elysia({ name: "identity" })
    .get("/identity", read, READ)
    .put("/identity", write, WRITE)
    .delete("/identity", noDelete)
    .get("/context", read, READ)
    .put("/context", write, WRITE)
    .delete("/context", noDelete)
    .get("/identity/ui", () => fileResponse(INDEX_HTML, "index.html"))
    .get("/assets/identity/:name", ({ params }) => {
      const path = Object.hasOwn(PAGE_FILES, params.name) ? PAGE_FILES[params.name] : undefined;
      if (!path) throw notFound(`no asset identity/${params.name}`);
      return fileResponse(path, params.name);
    });
}
