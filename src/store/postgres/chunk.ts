import type { PgHandle } from "./open";
import { reportingContention } from "./contention";

/**
 * PostgreSQL's wire protocol counts a statement's bind parameters in 16 bits:
 * at most 65,535 per statement. A multi-row INSERT spends one per column per
 * row (13 for a memory: ~5,000 memories is past it), so every bulk write of
 * this engine goes through `byParams`.
 */
export const PG_MAX_PARAMS = 65_535;

/**
 * Headroom for parameters a statement adds beside its rows (an ON CONFLICT
 * ... SET with values, a RETURNING expression): a few at most today.
 */
const RESERVED_PARAMS = 535;

/**
 * Splits `rows` (objects for drizzle's `.values()`, one parameter per key)
 * into runs that fit one statement, in order.
 */
export function byParams<T extends object>(rows: readonly T[], budget = PG_MAX_PARAMS - RESERVED_PARAMS): T[][] {
  if (rows.length === 0) return [];
  let perRow = 1;
  for (const r of rows) perRow = Math.max(perRow, Object.keys(r).length);
  const size = Math.max(1, Math.floor(budget / perRow));
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/**
 * Runs `fn` so that its `statements` writes land together: as they are when
 * there is one, or already inside the caller's transaction; otherwise in a
 * transaction of its own (a bulk write split by `byParams` stays atomic).
 */
export function inOneTransaction<T>(h: PgHandle, statements: number, fn: (th: PgHandle) => Promise<T>): Promise<T> {
  if (statements <= 1 || h.inTransaction) return fn(h);
  return reportingContention(() => h.sql.begin((tx) => fn(h.bind(tx)))) as Promise<T>;
}
