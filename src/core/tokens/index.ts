export type { Role, TokenColumns, TokenRow, TokensStore } from "./store";
export { tokenRowOf } from "./store";
export type { Principal } from "./principal";
export { BYPASS_PRINCIPAL, CONFIG_PRINCIPAL, inScope, roleAtLeast } from "./principal";
export type { Authentication, CreateTokenInput } from "./tokens";
export { authenticate, createToken, hashToken, parseExpiry, revokeToken, ROLES, tokenView } from "./tokens";
export { checkMemoryInScope, refuseScoped, scopedProject } from "./scope";
