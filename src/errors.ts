/**
 * Core throws these; http/ maps `code` to a status in one table and mcp/ turns
 * them into tool results with isError. `details` carries spec-mandated extra
 * fields (e.g. the candidates of an ambiguous id prefix).
 */
export type ErrorCode =
  | "invalid"
  | "not_found"
  | "conflict"
  | "reserved"
  | "unavailable"
  | "too_large"
  | "unauthorized"
  | "forbidden"
  | "method_not_allowed"
  | "rate_limited"
  | "internal";

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "AppError";
  }
}

export const invalid = (message: string, details?: Record<string, unknown>) => new AppError("invalid", message, details);
export const notFound = (message: string) => new AppError("not_found", message);
export const conflict = (message: string, details?: Record<string, unknown>) => new AppError("conflict", message, details);
export const reserved = (message: string) => new AppError("reserved", message);
export const unavailable = (message: string) => new AppError("unavailable", message);
export const tooLarge = (message: string) => new AppError("too_large", message);

/** Configuration problems stop start-up with a message naming file and key. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}
