import { type Static, Type } from "@sinclair/typebox";

/** POST /tokens (and `memsvc token create`): core checks the meaning (name rule, role, duration). */
export const TokenCreateInput = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 64,
      description: "The member's name: letters, digits, '.', '_', '@' or '-'; unique among live tokens.",
      error: "name is required: 1-64 letters, digits, '.', '_', '@' or '-'",
    }),
    role: Type.Optional(
      Type.String({
        enum: ["reader", "writer", "admin"],
        pattern: "^(reader|writer|admin)$",
        description: "reader (read only), writer (the default: read and write memories) or admin (also tokens, the audit log and identity writes).",
        error: "role must be reader, writer or admin",
      }),
    ),
    projects: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
        maxItems: 100,
        description: "Limit the token to these projects (default: every project).",
        error: "projects must be a list of project names",
      }),
    ),
    expires: Type.Optional(
      Type.String({
        maxLength: 20,
        description: "How long it stays valid: days (90d), hours (12h) or weeks (2w). Default: never expires.",
        error: 'expires must be a duration string such as "90d"',
      }),
    ),
  },
  { additionalProperties: false },
);
export type TokenCreateInput = Static<typeof TokenCreateInput>;

/** GET /audit (and `memsvc audit`). */
export const AuditInput = Type.Object(
  {
    actor: Type.Optional(Type.String({ maxLength: 200, description: "Only entries of this token name (or cli:<user>, localhost, config)." })),
    action: Type.Optional(Type.String({ maxLength: 200, description: 'One action (memory.deleted) or a prefix ending in "." (memory.).' })),
    since: Type.Optional(Type.String({ maxLength: 40, description: "From this date or ISO time." })),
    until: Type.Optional(Type.String({ maxLength: 40, description: "Before this date or ISO time." })),
    before: Type.Optional(Type.Integer({ minimum: 1, description: "Entries older than this id: next_before of the previous page." })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: "Entries per page (default 100, at most 1000)." })),
  },
  { additionalProperties: false },
);
export type AuditInput = Static<typeof AuditInput>;
