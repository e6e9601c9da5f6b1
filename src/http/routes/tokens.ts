import { Elysia } from "elysia";
import { auditLog, readAudit } from "../../core/audit";
import type { Services } from "../../core/services";
import { createToken, revokeToken, tokenView } from "../../core/tokens";
import { jsonObject } from "../body";
import { queryOptions } from "../schema-query";
import { AuditInput, TokenCreateInput } from "../../core/tokens/schema";
import { peerOf, principalOf } from "../access";

/**
 * Token management and the audit log: admin only (access.ts requiredRole).
 * `memsvc token` and `memsvc audit` do the same on the database directly.
 */
export function tokenRoutes(s: Services) {
  const actor = (request: Request) => principalOf(request)?.name ?? "-";
  return new Elysia({ name: "tokens" })
    .get("/tokens", async () => ({ tokens: (await s.storage.tokens.list()).map((r) => tokenView(r, s.now())) }))
    .post(
      "/tokens",
      async ({ body, request, set }) => {
        const { token, row } = await createToken(s.storage.tokens, body, s.now());
        auditLog(s).record({
          actor: actor(request),
          action: "token.created",
          target: row.name,
          detail: JSON.stringify({ role: row.role, projects: row.projects }),
          peer: peerOf(request),
        });
        set.status = 201;
        return { token, ...tokenView(row, s.now()), note: "shown once: only its hash is stored" };
      },
      jsonObject(TokenCreateInput),
    )
    .delete("/tokens/:name", async ({ params, request }) => {
      await revokeToken(s.storage.tokens, params.name, s.now());
      auditLog(s).record({ actor: actor(request), action: "token.revoked", target: params.name, detail: null, peer: peerOf(request) });
      return { revoked: params.name };
    })
    .get("/audit", async ({ query }) => readAudit(s.storage.audit, query), queryOptions(AuditInput));
}
