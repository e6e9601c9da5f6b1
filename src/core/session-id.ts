import { invalid } from "../errors";

/** Longer ids are refused, not cut: two sessions must never share a truncated id. */
export const MAX_SESSION_ID = 200;

/**
 * An agent session's id as every caller gives it: /recall-index's
 * `session_id` and a search's `X-Memsvc-Session` header read the same, so one
 * session's receipts line up whichever way it asked (trimmed; blank or
 * over-long is a 400, naming the field it came in).
 */
export function parseSessionId(value: unknown, field = "session_id"): string {
  if (value === undefined || value === null || value === "") throw invalid(`${field} is required`);
  if (typeof value !== "string") throw invalid(`${field} must be a string`);
  const id = value.trim();
  if (!id) throw invalid(`${field} must not be blank`);
  if (id.length > MAX_SESSION_ID) throw invalid(`${field} is longer than ${MAX_SESSION_ID} characters`);
  return id;
}
