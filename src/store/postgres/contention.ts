import { AppError } from "../../errors";

/**
 * SQLSTATEs by which PostgreSQL aborts a transaction because of another one:
 * a deadlock (40P01; the server breaks it after deadlock_timeout by aborting
 * one side) and a serialization failure (40001: only under REPEATABLE READ or
 * SERIALIZABLE, which memsvc does not ask for, but a DBA may make the default).
 */
const CONTENTION = new Set(["40P01", "40001"]);

function sqlState(e: unknown): string | null {
  for (let cur: unknown = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const link = cur as { code?: unknown; errno?: unknown };
    const code = link.code === "ERR_POSTGRES_SERVER_ERROR" && typeof link.errno === "string" ? link.errno : link.code;
    if (typeof code === "string" && CONTENTION.has(code)) return code;
  }
  return null;
}

/**
 * `e` as a 503 `unavailable` (reason `contention`) when the database aborted
 * the transaction for a deadlock or a serialization failure: the transaction
 * rolled back whole, so nothing of it was written and the client may send it
 * again. Not retried here: a transaction's callback may count progress
 * outside the database (the nightly's digest), which a silent re-run would
 * count twice. Anything else is returned unchanged.
 */
export function contentionError(e: unknown): unknown {
  const code = sqlState(e);
  if (!code) return e;
  const what = code === "40P01" ? "a deadlock with another transaction" : "a serialization failure against another transaction";
  const err = new AppError("unavailable", `the database aborted this request's transaction (${code}: ${what}); nothing was written: send it again`, {
    reason: "contention",
  });
  (err as { cause?: unknown }).cause = e;
  return err;
}

/** Runs `fn` (a transaction) and turns a deadlock or serialization failure into contentionError's 503. */
export async function reportingContention<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw contentionError(e);
  }
}
