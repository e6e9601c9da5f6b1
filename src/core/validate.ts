import type { Static, TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { type ValueError, ValueErrorType } from "@sinclair/typebox/errors";
import { invalid } from "../errors";

/**
 * One way to turn a schema failure into the message a caller reads, for both
 * edges: REST (Elysia hands its ValueErrors to http/app.ts) and MCP (which
 * checks tool arguments with `checkInput`). A property's `error` option, when
 * set, replaces the generic wording; a function receives the bad value.
 */
export type ErrorOption = string | ((value: unknown) => string);

/**
 * Options an operation schema may carry beyond JSON Schema's: `error` (above;
 * in a string, `{field}` stands for the field's path, e.g. marks[2].commits),
 * `missing` (the message when a required field is absent) and, on an object,
 * `unknownKeys` (the message naming keys it does not take: an object with it
 * refuses them on REST too, where Elysia would otherwise drop them silently).
 */
export interface MessageOptions {
  error?: ErrorOption;
  missing?: string;
  unknownKeys?: (keys: string[]) => string;
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checker<T extends TSchema>(schema: T): TypeCheck<T> {
  let c = compiled.get(schema);
  if (!c) compiled.set(schema, (c = TypeCompiler.Compile(schema)));
  return c as TypeCheck<T>;
}

/** The input, typed, when it matches the schema; else an `invalid` AppError naming the first problem. */
export function checkInput<T extends TSchema>(schema: T, value: unknown): Static<T> {
  const unknown = unknownKeysProblem(schema, value);
  if (unknown) throw invalid(unknown);
  const c = checker(schema);
  if (c.Check(value)) return value;
  throw invalid(inputErrorMessage([...c.Errors(value)], value));
}

/**
 * The `unknownKeys` message of the first object (the input or a property of
 * it, at any depth) holding keys its schema does not name, or null. Runs on
 * the input as sent: REST calls it before Elysia strips unknown keys.
 */
export function unknownKeysProblem(schema: TSchema, value: unknown): string | null {
  const s = (schema as { anyOf?: TSchema[] }).anyOf?.find((x) => (x as { type?: string }).type === "object") ?? schema;
  const props = (s as { properties?: Record<string, TSchema> }).properties;
  if (!props || value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const rule = (s as MessageOptions).unknownKeys;
  const extra = Object.keys(value).filter((k) => !Object.hasOwn(props, k));
  if (rule && extra.length) return rule(extra);
  for (const [k, p] of Object.entries(props)) {
    const inner = unknownKeysProblem(p, (value as Record<string, unknown>)[k]);
    if (inner) return inner;
  }
  return null;
}

/** A path as a reader writes it: /marks/2/commits is marks[2].commits. */
const fieldOf = (e: ValueError) =>
  e.path
    .replace(/^\//, "")
    .split("/")
    .map((seg, i) => (/^\d+$/.test(seg) ? `[${seg}]` : i === 0 ? seg : `.${seg}`))
    .join("") ||
  ((e.schema as { title?: string }).title ?? "");

const NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  integer: "a number",
  boolean: "true or false",
  object: "an object",
  array: "an array",
};

const got = (value: unknown) => (Array.isArray(value) ? "an array" : value === null ? "null" : typeof value === "string" ? "a string" : typeof value);

/** The message for a failed check: the first error that says most (a missing field before its type). */
export function inputErrorMessage(errors: readonly ValueError[], root: unknown): string {
  if (errors.length === 0) return "invalid input";
  // A missing required property is reported twice (required, then its type): the first says it better.
  const e = errors[0];
  const field = fieldOf(e);
  const raw = (e.schema as MessageOptions).error;
  const option = typeof raw === "string" ? raw.replaceAll("{field}", field) : raw;
  if (
    field === "" &&
    (e.type === ValueErrorType.Object || e.type === ValueErrorType.ObjectRequiredProperty) &&
    (root === undefined || root === null || root === "")
  ) {
    return "a JSON object body is required (Content-Type: application/json)";
  }
  if (field === "" && e.type === ValueErrorType.Object) return `the body must be a JSON object, got ${got(root)}`;
  if (e.type === ValueErrorType.ObjectAdditionalProperties) return `Unrecognized key: ${JSON.stringify(String(e.path.split("/").pop()))}`;
  if (e.value === undefined) {
    const missing = (e.schema as MessageOptions).missing;
    if (missing) return missing.replaceAll("{field}", field);
    const about = (e.schema as { description?: string }).description;
    if (typeof option === "string" && /required/.test(option)) return option;
    return about ? `${field} is required: ${about}` : `${field} is required`;
  }
  if (typeof option === "function") return option(e.value);
  if (typeof option === "string") return option;
  const s = e.schema as { type?: string; minimum?: number; maximum?: number; minLength?: number; maxLength?: number; enum?: unknown[] };
  switch (e.type) {
    case ValueErrorType.Integer:
      return typeof e.value === "number" ? `${field} must be a whole number` : `${field} must be a number`;
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return `${field} must be at least ${s.minimum}`;
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return `${field} must be at most ${s.maximum}`;
    case ValueErrorType.StringMinLength:
      return s.minLength === 1 ? `${field} must not be empty` : `${field} is shorter than ${s.minLength} characters`;
    case ValueErrorType.StringMaxLength:
      return `${field} is longer than ${s.maxLength} characters`;
    case ValueErrorType.Union: {
      // A nullable field (T or null) is described by T: a value that is no null gets T's own message.
      const variants = (e.schema as { anyOf?: { type?: string; error?: ErrorOption }[] }).anyOf ?? [];
      const at = variants.findIndex((x) => x.type !== "null");
      const first = variants[at];
      if (e.value !== null && variants.length === 2 && variants.some((x) => x.type === "null") && e.errors?.[at]) {
        const inner = [...e.errors[at]];
        if (inner.length) return inputErrorMessage(inner, root);
      }
      if (typeof first?.error === "string") return first.error;
      if (first?.type) return `${field} must be ${NAMES[first.type] ?? "valid"}`;
      return `${field} has an unexpected value ${JSON.stringify(e.value)?.slice(0, 40)}`;
    }
  }
  return `${field} must be ${NAMES[s.type ?? ""] ?? "valid"}`;
}
