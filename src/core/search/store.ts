/**
 * What search/ needs from storage: full-text ranking, nearest vectors, recent listing, term counts, similarity calibration.
 * One implementation per engine: src/store/sqlite/search.ts and src/store/postgres/search.ts.
 * Every method is async (PostgreSQL answers over the network); writes that belong
 * together are one method, so each engine runs them in one transaction.
 */
export interface SearchStore {}
