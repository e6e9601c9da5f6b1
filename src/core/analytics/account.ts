import type { Services } from "../services";

/** GET /account (spec: the Account object): each field null when its config key is absent. */
export interface Account {
  name: string | null;
  org: string | null;
  plan: string | null;
}

/** The account block from config `displayName`, `orgName` and `planLabel`. */
export function account(s: Services): { account: Account } {
  const { displayName, orgName, planLabel } = s.config;
  return { account: { name: displayName ?? null, org: orgName ?? null, plan: planLabel ?? null } };
}
