import type { Services } from "../core/services";
import type { Principal } from "../core/tokens";
import { auditLog } from "../core/audit";
import { peerOf } from "./access";

type Bag = Record<string, unknown>;
const bag = (v: unknown): Bag => (v && typeof v === "object" && !Array.isArray(v) ? (v as Bag) : {});
const idOf = (...vs: unknown[]) => {
  for (const v of vs) if (typeof v === "string" && v) return v.slice(0, 40);
  return null;
};

/**
 * After a write succeeded: who (the principal's name), what, which memory or
 * token, from where. Reads are not logged (a hook reads on every prompt).
 */
export function auditRoute(s: Services, p: Principal, request: Request, path: string, query: unknown, body: unknown, response: unknown): void {
  const q = bag(query);
  const b = bag(body);
  const r = bag(response);
  const url = new URL(request.url).searchParams;
  const memory = bag(r.memory);
  let action: string | null = null;
  let target: string | null = null;
  let detail: string | null = null;
  switch (`${request.method} ${path}`) {
    case "POST /ingest":
      if (r.id) (action = "memory.created"), (target = idOf(r.id));
      break;
    case "POST /distill":
      if (Array.isArray(r.ids) && r.ids.length) (action = "memory.created"), (detail = JSON.stringify({ via: "distill", ids: r.ids }));
      break;
    case "PATCH /memory":
      (action = "memory.changed"), (target = idOf(memory.id, r.id, b.id, q.id, url.get("id")));
      break;
    case "POST /memory/stale":
      (action = "memory.changed"), (detail = JSON.stringify({ stale: r.marked ?? r.count ?? null }));
      break;
    case "POST /memory/restore":
      (action = "memory.restored"), (target = idOf(memory.id, b.id)), (detail = JSON.stringify({ version: r.restored_version ?? b.version }));
      break;
    case "DELETE /memory":
      (action = "memory.deleted"), (target = idOf(r.id, url.get("id"), b.id));
      break;
    case "POST /memories/delete":
      (action = "memory.bulk_deleted"), (detail = JSON.stringify({ deleted: r.deleted ?? null, project: b.project ?? null, query: b.query ?? null }));
      break;
    case "POST /feedback":
    case "POST /memory/review":
      // Feedback and the pages' review actions change how a memory is recalled (wrong retires it from recall, retire hides it).
      if (r.id) (action = "memory.changed"), (target = idOf(r.id)), (detail = JSON.stringify({ feedback: r.kind ?? null }));
      break;
    case "PUT /identity":
    case "PUT /context":
      (action = "identity.changed"), (target = typeof q.agent === "string" ? q.agent : null);
      break;
  }
  if (action) auditLog(s).record({ actor: p.name, action, target, detail, peer: peerOf(request) });
}
