/**
 * The projects a caller may see: a project-scoped member token's list, or
 * null for every project (admin, unscoped tokens, the config token, the
 * localhost bypass). The edge reads it from the request's principal and
 * passes it into core, and core into the store methods that read across
 * projects, so a scoped answer is filtered in SQL (its counts included)
 * rather than trimmed afterwards. Memories of no project are in no scope.
 */
export type ProjectScope = readonly string[] | null;

/** A memory of `project` is visible within `scope`. */
export function inProjectScope(scope: ProjectScope, project: string | null): boolean {
  return scope === null || (project !== null && scope.includes(project));
}
