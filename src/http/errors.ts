import type { AppError, ErrorCode } from "../errors";

const STATUS: Record<ErrorCode, number> = {
  invalid: 400,
  reserved: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};

// A 413 leaves the rest of the body unread; without this Bun reads (and drops) all of it, however large it says it is.
const CLOSE_AFTER: Partial<Record<ErrorCode, Record<string, string>>> = { too_large: { connection: "close" } };

export function errorResponse(code: ErrorCode, message: string, details?: Record<string, unknown>, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: { code, message, ...details } }), {
    status: STATUS[code],
    headers: { "content-type": "application/json; charset=utf-8", ...CLOSE_AFTER[code], ...headers },
  });
}

export function appErrorResponse(e: AppError): Response {
  return errorResponse(e.code, e.message, e.details);
}
