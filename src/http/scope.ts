import type { Services } from "../core/services";
import { checkMemoryInScope, refuseScoped, scopedProject, type Principal } from "../core/tokens";
import { AppError } from "../errors";

type Bag = Record<string, unknown>;
const bag = (v: unknown): Bag | null => (v && typeof v === "object" && !Array.isArray(v) ? (v as Bag) : null);

/** Routes a project-scoped token may use as they are: team-wide identity (writes need admin anyway), the API document, the MCP transports (each tool checks). */
const OPEN_TO_SCOPED = new Set([
  "GET /identity",
  "GET /context",
  "GET /openapi.json",
  "GET /openapi",
  "GET /mcp",
  "POST /mcp",
  "DELETE /mcp",
  "GET /sse",
  "POST /messages",
  "GET /health/llm",
]);

/**
 * Narrows a project-scoped token's request to its projects before the
 * handler runs: the project a read or write names is checked (or filled in
 * with the token's only project where the handler reads the parsed query or
 * body), and a memory named by id outside the scope is a 404 like an unknown
 * id. Routes that read across projects (the graph, facets, the domain index,
 * anchors, dashboard data) pass: their handlers hand the principal's
 * projects to core (access.ts scopeOf), which narrows them in SQL. What is
 * not narrowed (the account, receipts, recall sessions...) is refused with 403.
 * Unscoped principals pass.
 */
export async function enforceScope(s: Services, p: Principal, method: string, path: string, request: Request, query: unknown, body: unknown): Promise<void> {
  if (p.projects === null) return;
  const route = `${method} ${path}`;
  if (OPEN_TO_SCOPED.has(route)) return;
  const q = bag(query) ?? {};
  const b = bag(body);
  const url = new URL(request.url).searchParams;
  switch (route) {
    case "GET /search":
    case "GET /recent":
    case "GET /learnings":
    case "GET /lessons":
      q.project = scopedProject(p, q.project as string | undefined);
      return;
    case "GET /graph":
    case "GET /memories/facets":
    case "GET /index":
    case "GET /anchors":
    case "GET /dashboard/data":
      return; // narrowed by core to p.projects (the handler passes scopeOf(request))
    case "POST /recall-index":
      // Recalls within the token's project (its only one when none is named); core keeps project-less memories out.
      if (!b) return;
      b.project = scopedProject(p, b.project as string | undefined);
      return;
    case "POST /ingest":
    case "POST /distill":
    case "POST /memories/delete":
      if (!b) return; // the schema refuses it
      b.project = scopedProject(p, b.project as string | undefined);
      return;
    case "GET /memories/list":
    case "GET /memories/count": {
      // These read the raw URL (memory browser): the project must be named there.
      const named = url.get("project");
      if (scopedProject(p, named) !== named) throw new AppError("forbidden", `token ${p.name} is scoped to projects: name one (project=${p.projects[0]})`);
      return;
    }
    case "GET /memory":
    case "GET /memory/history":
      return checkMemoryInScope(s, p, q.id ?? url.get("id"));
    case "GET /memories/detail":
      return checkMemoryInScope(s, p, url.get("id"));
    case "DELETE /memory":
      return checkMemoryInScope(s, p, url.get("id") ?? b?.id);
    case "POST /memory/restore":
    case "POST /feedback":
    case "POST /memory/review":
      return checkMemoryInScope(s, p, b?.id);
    case "PATCH /memory":
      await checkMemoryInScope(s, p, b?.id ?? url.get("id"));
      // Moving a memory out of the scope (or to no project) is refused too.
      if (b && "project" in b) scopedProject(p, (b.project as string | null) ?? "");
      return;
  }
  refuseScoped(p, route);
}
