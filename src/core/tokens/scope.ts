import { AppError } from "../../errors";
import { resolveInScope } from "../memories";
import type { Services } from "../services";
import type { Principal } from "./principal";

const forbidden = (message: string) => new AppError("forbidden", message);

const scopeText = (p: Principal) => `token ${p.name} is scoped to ${p.projects!.length === 1 ? "project" : "projects"} ${p.projects!.join(", ")}`;

/**
 * The project a project-scoped principal's read or write acts on: the one it
 * names, if in scope, or its only project. Unscoped principals get what they
 * asked for. A scoped token never reads across projects, nor memories of no
 * project (those belong to nobody's scope).
 */
export function scopedProject(p: Principal, requested: string | null | undefined): string | null | undefined {
  if (p.projects === null) return requested;
  const named = typeof requested === "string" && requested.trim() ? requested.trim() : null;
  if (named === null) {
    if (p.projects.length === 1) return p.projects[0];
    throw forbidden(`${scopeText(p)}: name one of them (project)`);
  }
  if (!p.projects.includes(named)) throw forbidden(`${scopeText(p)}: project ${named.slice(0, 200)} is outside it`);
  return named;
}

/**
 * A memory a scoped principal names by id: outside its scope it does not
 * exist (the same 404 as an unknown id), and an ambiguous prefix is not
 * resolved (its candidates could come from other projects).
 */
export async function checkMemoryInScope(s: Services, p: Principal, rawId: unknown): Promise<void> {
  if (p.projects !== null) await resolveInScope(s, rawId, p.projects);
}

/** Refuses what a project-scoped token cannot use yet (the route reads across projects). */
export function refuseScoped(p: Principal, what: string): void {
  if (p.projects !== null) throw forbidden(`${what} spans every project; ${scopeText(p)}`);
}
