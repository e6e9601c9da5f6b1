import { Value } from "@sinclair/typebox/value";
import { Elysia, t, type TSchema } from "elysia";
import appJs from "../../../assets/memories/app.js" with { type: "file" };
import indexHtml from "../../../assets/memories/index.html" with { type: "file" };
import styleCss from "../../../assets/memories/style.css" with { type: "file" };
import { memoryDetail } from "../../core/memories";
import { countSelection, deleteSelection, listFacets, listMemories } from "../../core/browse";
import type { Services } from "../../core/services";
import { invalid, notFound } from "../../errors";
import { fileResponse } from "../pages";

// With `type: "file"` Bun yields the file's path; bun-types describe *.html imports as HTML bundles.
const INDEX_HTML = indexHtml as unknown as string;
const PAGE_FILES: Readonly<Record<string, string>> = { "app.js": appJs, "style.css": styleCss };

const DATE = "^\\d{4}-\\d{2}-\\d{2}(T[0-9:.]+(Z|[+-]\\d{2}:\\d{2})?)?$";

/** The filters GET /memories/list, GET /memories/count and POST /memories/delete share (TypeBox: shape; core: meaning). */
const FILTERS = {
  query: t.Optional(t.String({ maxLength: 2000 })),
  project: t.Optional(t.String({ maxLength: 200 })),
  type: t.Optional(t.Union([t.Literal(""), t.Literal("knowledge"), t.Literal("experience"), t.Literal("decisions"), t.Literal("learnings")], { error: "type must be knowledge, experience, decisions or learnings" })),
  domain: t.Optional(t.String({ maxLength: 100 })),
  from: t.Optional(t.Union([t.Literal(""), t.String({ pattern: DATE })], { error: "from must be a date (YYYY-MM-DD) or an ISO time" })),
  to: t.Optional(t.Union([t.Literal(""), t.String({ pattern: DATE })], { error: "to must be a date (YYYY-MM-DD) or an ISO time" })),
  min_strength: t.Optional(t.Union([t.Literal(""), t.String({ pattern: "^\\s*(\\d+(\\.\\d*)?|\\.\\d+)\\s*$" })], { error: "min_strength must be a number >= 0" })),
  usage: t.Optional(t.Union([t.Literal(""), t.Literal("never"), t.Literal("shown"), t.Literal("used")], { error: "usage must be never, shown or used" })),
};

const LIST_QUERY = t.Object(
  {
    ...FILTERS,
    sort: t.Optional(t.Union([t.Literal(""), t.Literal("relevance"), t.Literal("importance"), t.Literal("newest")], { error: "sort must be relevance, importance or newest" })),
    cursor: t.Optional(t.String({ maxLength: 200 })),
    limit: t.Optional(t.String({ pattern: "^\\d{1,6}$", error: "limit must be a positive integer" })),
  },
  { additionalProperties: false },
);

const COUNT_QUERY = t.Object(FILTERS, { additionalProperties: false });
const DETAIL_QUERY = t.Object({ id: t.String({ minLength: 1, maxLength: 40, error: "id is required: a memory UUID or its first 8 (or more) characters" }) }, { additionalProperties: false });

const DELETE_BODY = t.Object(
  {
    query: t.Optional(t.String({ maxLength: 2000 })),
    project: t.Optional(t.String({ maxLength: 200 })),
    type: FILTERS.type,
    domain: t.Optional(t.String({ maxLength: 100 })),
    from: FILTERS.from,
    to: FILTERS.to,
    min_strength: t.Optional(t.Number({ minimum: 0, error: "min_strength must be a number >= 0" })),
    usage: FILTERS.usage,
    confirm_count: t.Integer({ minimum: 0, error: "confirm_count is required: the number of memories shown for confirmation" }),
  },
  { additionalProperties: false, error: "the body must be a JSON object of filters and confirm_count" },
);

/**
 * Checks a raw query or body against its TypeBox schema. Done here rather
 * than as the route's schema because Elysia's normalising would first strip
 * unknown names, and a misspelt filter must be refused, not dropped: it
 * would widen a bulk delete.
 */
function checked<T>(schema: TSchema, value: unknown): T {
  if (Value.Check(schema, value)) return value as T;
  const first = Value.Errors(schema, value).First();
  const where = first?.path ? first.path.slice(1) : "";
  const message = (first?.schema as { error?: string } | undefined)?.error ?? first?.message ?? "invalid input";
  throw invalid(where && !message.includes(where) ? `${where}: ${message}` : message);
}

const rawQuery = (request: Request) => Object.fromEntries(new URL(request.url).searchParams);

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
    .get("/memories/list", ({ request }) => listMemories(s, checked(LIST_QUERY, rawQuery(request))))
    .get("/memories/facets", () => listFacets(s))
    .get("/memories/count", ({ request }) => countSelection(s, checked(COUNT_QUERY, rawQuery(request))))
    .get("/memories/detail", ({ request }) => memoryDetail(s, checked<{ id: string }>(DETAIL_QUERY, rawQuery(request)).id))
    .post("/memories/delete", ({ body }) => deleteSelection(s, checked(DELETE_BODY, body)));
}
