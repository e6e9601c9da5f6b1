export type { Role, TokenColumns, TokensStore } from "./store";
export { tokenRowOf } from "./store";
export type { Principal } from "./principal";
export { BYPASS_PRINCIPAL, CONFIG_PRINCIPAL, creatorOf, roleAtLeast } from "./principal";
export { authenticate, createToken, hashToken, revokeToken, tokenView } from "./tokens";
export { checkMemoryInScope, refuseScoped, scopedProject } from "./scope";
