/** Default audit.retentionDays: a quarter covers a review cycle; config can lengthen it. */
export const AUDIT_RETENTION_DAYS = 90;
/** Rows kept at most whatever their age: ~200 bytes each, 1M is ~200 MB at worst. */
export const AUDIT_MAX_ROWS = 1_000_000;
/** Pruning runs on the first write and then at most this often per server. */
export const AUDIT_PRUNE_EVERY_MS = 3_600_000;
/**
 * Refused authentications logged per peer per minute; beyond that they are
 * counted and one "auth.refused.suppressed" line per minute says how many, so
 * a flood of bad tokens costs a row a minute, not a row a request.
 */
export const AUDIT_REFUSALS_PER_MINUTE = 10;
/** Writes are batched: the request path only queues them (one transaction per batch). */
export const AUDIT_FLUSH_MS = 200;
export const AUDIT_PAGE_DEFAULT = 100;
export const AUDIT_PAGE_MAX = 1000;
