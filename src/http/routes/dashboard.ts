import { Elysia } from "elysia";
import chartJs from "../../../node_modules/chart.js/dist/chart.umd.min.js" with { type: "file" };
import appJs from "../../../assets/dashboard/app.js" with { type: "file" };
import indexHtml from "../../../assets/dashboard/index.html" with { type: "file" };
import styleCss from "../../../assets/dashboard/style.css" with { type: "file" };
import { backlogSummary, readBacklog } from "../../capture/backlog";
import { account, dashboardData } from "../../core/analytics";
import type { Services } from "../../core/services";
import { notFound } from "../../errors";
import { DashboardInput } from "../../core/analytics/schema";
import { scopeOf } from "../access";
import { queryOptions } from "../schema-query";
import { fileResponse } from "../pages";

// With `type: "file"` Bun yields the file's path; bun-types describe *.html imports as HTML bundles.
const INDEX_HTML = indexHtml as unknown as string;

/**
 * The only files /dashboard/vendor/ serves: the charting library from npm
 * (its UMD build: a plain script, no eval), embedded in the binary.
 */
export const DASHBOARD_VENDOR: Readonly<Record<string, string>> = { "chart.js": chartJs };

/** The page's own script and style (public, like every page asset). */
const PAGE_FILES: Readonly<Record<string, string>> = { "app.js": appJs, "style.css": styleCss };

const pick = (map: Readonly<Record<string, string>>, name: string, where: string) => {
  if (!Object.hasOwn(map, name)) throw notFound(`no file ${where}${name.slice(0, 80)}`);
  return fileResponse(map[name], name);
};

/** GET /account and GET /dashboard/data need the token (app.ts); the page shell and its files hold no data. */
export function dashboardRoutes(s: Services) {
  return (
    new Elysia({ name: "dashboard" })
      .get("/account", () => account(s))
      // The backlog is this home's capture state (a laptop's server and its hooks share the home), not a store query:
      // no project's, so a project-scoped token (scopeOf) gets null, like the nightly digests and the account.
      .get(
        "/dashboard/data",
        async ({ query, request }) => {
          const scope = scopeOf(request);
          return { ...(await dashboardData(s, query, scope)), backlog: scope === null ? backlogSummary(readBacklog(s.config.home)) : null };
        },
        queryOptions(DashboardInput),
      )
      .get("/dashboard", () => fileResponse(INDEX_HTML, "index.html"))
      .get("/dashboard/vendor/:file", ({ params }) => pick(DASHBOARD_VENDOR, params.file, "/dashboard/vendor/"))
      .get("/assets/dashboard/:file", ({ params }) => pick(PAGE_FILES, params.file, "/assets/dashboard/"))
  );
}
