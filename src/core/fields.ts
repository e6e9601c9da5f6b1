import { type TSchema, Type } from "@sinclair/typebox";
import type { ErrorOption } from "./validate";

/**
 * Field builders the operation schemas (core/<capability>/schema.ts) share,
 * so a project or a memory id reads the same in every operation, in the
 * OpenAPI document and in MCP tools/list.
 */

export const ID_HELP = "Memory id: the first 8 characters (as shown in results) or the full UUID.";

export const text = (description: string, options: { maxLength?: number; error?: ErrorOption; missing?: string } = {}) =>
  Type.String({ description, ...options });

/** An optional body field where JSON null means "absent" (as every body field has always accepted). */
export const nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()], { description: schema.description }));

/** A positive whole number; above `maximum` REST caps it (see http/schema-query.ts), MCP refuses it. */
export const count = (description: string, maximum: number) => Type.Optional(Type.Integer({ minimum: 1, maximum, description }));

export const project = (description = "Project name; only memories of this project count.") => Type.Optional(text(description));

/** A session's date: the format and the calendar are checked by parseSessionDate, which names what it expects. */
export const sessionDate = (description = "ISO date of the session (default now).") =>
  nullable(text(description, { error: "{field} must be an ISO date such as 2026-11-21 or 2026-11-21T09:30:00Z" }));
