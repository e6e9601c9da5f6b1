import { type TObject, type TSchema, Type } from "@sinclair/typebox";
import { unknownKeysProblem } from "../core/validate";
import { invalid } from "../errors";

/**
 * Route options for a query checked by the operation's `schema` (read as
 * queries always were: normalizeQuery). The schema's `unknownKeys` rule, and
 * `before` (checks that need the names as sent), run before Elysia drops
 * the names the schema does not know.
 */
export function queryOptions<T extends TObject>(schema: T, before?: (query: Record<string, unknown>, body: unknown) => void) {
  const numbers = new Set(Object.keys(schema.properties).filter((k) => (schema.properties[k] as { type?: string }).type === "integer"));
  return {
    query: queryOf(schema),
    transform: ({ request, query, body }: { request: Request; query: Record<string, unknown>; body?: unknown }) => {
      normalizeQuery(request, query, numbers);
      const unknown = unknownKeysProblem(schema, query);
      if (unknown) throw invalid(unknown);
      before?.(query, body);
    },
  };
}

/**
 * An operation's schema as a REST query takes it (numbers arrive as text:
 * normalizeQuery reads them). A count above its maximum is
 * capped by core on REST (as it always was) where MCP refuses it, so the
 * maximum moves into the description instead of the check.
 */
export function queryOf<T extends TObject>(schema: T): T {
  const properties: Record<string, TSchema> = {};
  for (const [name, prop] of Object.entries(schema.properties)) {
    if ((prop as { type?: string }).type !== "integer") {
      properties[name] = prop;
      continue;
    }
    const { maximum, description, minimum } = prop as { maximum?: number; minimum?: number; description?: string };
    const capped = maximum === undefined ? description : `${description ?? ""} Values above ${maximum} are capped at ${maximum}.`.trim();
    properties[name] = Type.Optional(Type.Integer({ minimum, description: capped, error: `${name} must be a positive integer` }));
  }
  return Type.Object(properties, { additionalProperties: false, unknownKeys: (schema as { unknownKeys?: unknown }).unknownKeys }) as unknown as T;
}

/**
 * Query parameters as they have always been read: the first of repeated
 * names, an empty value as absent (Elysia keeps the last, and would refuse
 * `limit=` instead of using the default), and whole numbers in decimal
 * digits only (JavaScript's Number() would also take "1e9" and "0x10").
 */
export function normalizeQuery(request: Request, query: Record<string, unknown>, numbers: ReadonlySet<string>): void {
  const at = request.url.indexOf("?");
  if (at < 0) return;
  const params = new URLSearchParams(request.url.slice(at + 1));
  for (const key of Object.keys(query)) {
    const first = params.get(key);
    if (first === "" || first === null) delete query[key];
    else if (numbers.has(key)) query[key] = DIGITS.test(first) ? Number(first) : first;
    // Elysia has converted other numbers already: replace only what it took from a repeat.
    else if (params.getAll(key).length > 1) query[key] = typeof query[key] === "number" && Number.isFinite(Number(first)) ? Number(first) : first;
  }
}

const DIGITS = /^\s*-?\d+\s*$/;

/**
 * The query as these routes have always read it: a repeated name's last
 * value (as Elysia's parser keeps it), "" kept (their core gives an empty
 * value its own meaning), unknown names kept (they are refused).
 */
export function sentQuery(request: Request): Record<string, string> {
  const at = request.url.indexOf("?");
  return at < 0 ? {} : Object.fromEntries(new URLSearchParams(request.url.slice(at + 1)));
}
