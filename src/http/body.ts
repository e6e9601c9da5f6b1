import { invalid } from "../errors";

/** A JSON request body must be an object; anything else is a 400 naming what came. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || body === "") throw invalid("a JSON object body is required (Content-Type: application/json)");
  if (typeof body !== "object" || Array.isArray(body)) throw invalid(`the body must be a JSON object, got ${Array.isArray(body) ? "an array" : typeof body}`);
  return body as Record<string, unknown>;
}

/** Query parameters given twice arrive as arrays; take the first. */
export function queryParams(query: Record<string, unknown>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(query)) out[k] = Array.isArray(v) ? String(v[0]) : v === undefined ? undefined : String(v);
  return out;
}

/**
 * Route options for a JSON object body checked by `schema`: the object test
 * runs first, on the body as sent (Elysia's check would see an array or a
 * string already reduced to `{}` and report a missing field instead).
 */
export function jsonObject<T>(schema: T) {
  // `parse: "json"` names the media type for the OpenAPI document; app.ts's parseJsonBody runs first and always answers.
  return { body: schema, parse: "json" as const, transform: ({ body }: { body: unknown }) => void objectBody(body) };
}
