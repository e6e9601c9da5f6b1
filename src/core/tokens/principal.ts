import type { ProjectScope } from "../scope";
import type { Role } from "./store";

/**
 * Who a request acts as, once authenticated: a member's token from the
 * database, the config file's token (SQLite only: an admin), or the localhost
 * bypass (an admin: it is the person at the machine).
 */
export interface Principal {
  name: string;
  role: Role;
  /** Projects the principal may see and change; null: every project. */
  projects: ProjectScope;
  via: "token" | "config" | "bypass";
}

const RANK: Record<Role, number> = { reader: 0, writer: 1, admin: 2 };

export function roleAtLeast(have: Role, need: Role): boolean {
  return RANK[have] >= RANK[need];
}

export const CONFIG_PRINCIPAL: Principal = { name: "config", role: "admin", projects: null, via: "config" };
export const BYPASS_PRINCIPAL: Principal = { name: "localhost", role: "admin", projects: null, via: "bypass" };

/** The member a new memory records as its creator: a database token's name; none for the bypass and a home's config token (one owner). */
export function creatorOf(p: Principal | null): string | null {
  return p?.via === "token" ? p.name : null;
}
