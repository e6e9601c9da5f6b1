import type { TSchema } from "@sinclair/typebox";
import { checkInput } from "../core/validate";
import { invalid } from "../errors";

/** A JSON request body must be an object; anything else is a 400 naming what came. */
export function objectBody(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || body === "") throw invalid("a JSON object body is required (Content-Type: application/json)");
  if (typeof body !== "object" || Array.isArray(body)) throw invalid(`the body must be a JSON object, got ${Array.isArray(body) ? "an array" : typeof body}`);
  return body as Record<string, unknown>;
}

/**
 * Route options for a JSON object body checked by `schema`: the object test
 * runs first, on the body as sent (Elysia's check would see an array or a
 * string already reduced to `{}` and report a missing field instead), then
 * the schema, on the body as sent: Elysia's own check runs on its normalised
 * copy, which drops unknown keys (a schema's `unknownKeys` rule must see
 * them) and turns a string or an array where an object belongs into an
 * object of its indexes ({"sections": "x"} became {"sections": {"0": "x"}}).
 * A schema without an `unknownKeys` rule lets unknown keys pass here, as
 * REST always has (Elysia then drops them); MCP refuses them.
 * `before` may move a value in first (PATCH /memory's ?id).
 */
export function jsonObject<T extends TSchema>(schema: T, before?: (body: Record<string, unknown>, query: Record<string, unknown>) => void) {
  // `parse: "json"` names the media type for the OpenAPI document; app.ts's parseJsonBody runs first and always answers.
  return {
    body: schema,
    parse: "json" as const,
    transform: ({ body, query }: { body: unknown; query: Record<string, unknown> }) => {
      const b = objectBody(body);
      before?.(b, query);
      checkInput(restSchema(schema), b);
    },
  };
}

const lenient = new WeakMap<TSchema, TSchema>();

/** The schema REST checks a body with: unknown top-level keys pass unless it names them in an `unknownKeys` rule. */
function restSchema(schema: TSchema): TSchema {
  if ((schema as { unknownKeys?: unknown }).unknownKeys || schema.additionalProperties !== false) return schema;
  let l = lenient.get(schema);
  if (!l) lenient.set(schema, (l = { ...schema, additionalProperties: true }));
  return l;
}
