/**
 * What identity/ needs from storage: identity metadata kept in the database (section files stay on disk).
 * One implementation per engine: src/store/sqlite/identity.ts and src/store/postgres/identity.ts.
 * Every method is async (PostgreSQL answers over the network); writes that belong
 * together are one method, so each engine runs them in one transaction.
 */
export interface IdentityStore {}
