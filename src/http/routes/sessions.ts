import { Elysia } from "elysia";
import appJs from "../../../assets/sessions/app.js" with { type: "file" };
import indexHtml from "../../../assets/sessions/index.html" with { type: "file" };
import styleCss from "../../../assets/sessions/style.css" with { type: "file" };
import { notFound } from "../../errors";
import { fileResponse } from "../pages";

// With `type: "file"` Bun yields the file's path; bun-types describe *.html imports as HTML bundles.
const INDEX_HTML = indexHtml as unknown as string;
const PAGE_FILES: Readonly<Record<string, string>> = { "app.js": appJs, "style.css": styleCss };

/** The sessions page shell (public: it holds no data; it reads GET /recall/sessions and /recall/receipts with the token). */
export function sessionsPageRoutes() {
  return new Elysia({ name: "sessions-page" })
    .get("/sessions", () => fileResponse(INDEX_HTML, "index.html"))
    .get("/assets/sessions/:name", ({ params }) => {
      const path = Object.hasOwn(PAGE_FILES, params.name) ? PAGE_FILES[params.name] : undefined;
      if (!path) throw notFound(`no asset sessions/${params.name.slice(0, 80)}`);
      return fileResponse(path, params.name);
    });
}
