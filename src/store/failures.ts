import { AppError } from "../errors";

/**
 * Storage failures are the operator's to fix (free space, make the home
 * writable), not bugs: they become a 503 `unavailable` naming the cause,
 * with `reason` for machines, instead of an anonymous 500. 503 rather than
 * 507 because clients already treat 503 as "retry later, keep your data"
 * (capture does not advance its watermark), which is exactly right here.
 * SQLite rolls the failed transaction back, so nothing is half-written.
 */
export type StorageReason = "disk_full" | "read_only" | "cannot_open" | "io_error" | "unreachable";

const SQLITE: [RegExp, StorageReason][] = [
  [/^SQLITE_FULL/, "disk_full"],
  [/^SQLITE_READONLY/, "read_only"],
  [/^SQLITE_CANTOPEN/, "cannot_open"],
  [/^SQLITE_IOERR/, "io_error"],
];
// PostgreSQL (Bun's SQL client): lost or refused connections, and the server's
// SQLSTATE for a full disk (53100), a read-only standby (25006), a shutdown
// (57P01-57P03), too many connections (53300) and connection exceptions (08xxx).
// A transaction whose connection is lost is rolled back by the server.
const PG_CODE = /^ERR_POSTGRES_(CONNECTION_\w+|IDLE_TIMEOUT|LIFETIME_TIMEOUT)$/;
const PG_STATE: [RegExp, StorageReason][] = [
  [/^53100$/, "disk_full"],
  [/^25006$/, "read_only"],
  [/^(08...|57P0[123]|53300)$/, "unreachable"],
];
const FS: Record<string, StorageReason> = { ENOSPC: "disk_full", EDQUOT: "disk_full", EROFS: "read_only", EACCES: "read_only", EPERM: "read_only", EIO: "io_error" };

const HELP: Record<StorageReason, string> = {
  disk_full: "the disk holding the service home is full: free some space; writes resume at once",
  read_only: "the service home is read-only or not writable by this process: make it writable; writes resume at once",
  cannot_open: "the database file cannot be opened (a missing folder, no permission, or a read-only disk): check the service home",
  io_error: "the disk holding the service home reported an I/O error: check the disk and the server log",
  unreachable: "the PostgreSQL database cannot be reached or refused the connection: check that it runs and accepts connections (database_url, database_pool); requests succeed again once it answers",
};

/**
 * The AppError for a storage failure anywhere in `e`'s cause chain (or for a
 * value PostgreSQL refuses to store: a 400), or null when `e` is something else.
 */
export function storageFailure(e: unknown): AppError | null {
  for (let cur: unknown = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    let code = (cur as { code?: unknown }).code;
    const errno = (cur as { errno?: unknown }).errno;
    // A PostgreSQL server error: the SQLSTATE says what happened.
    if (code === "ERR_POSTGRES_SERVER_ERROR" && typeof errno === "string") code = errno;
    if (typeof code !== "string") continue;
    // PostgreSQL text cannot hold U+0000 (SQLite can): a string with one is the
    // client's to fix, a 400, not a server error. The statement (and its
    // transaction) failed, so nothing of it was written.
    if (code === "22021" || code === "22P05") {
      return new AppError("invalid", "a text value holds a NUL character (U+0000), which PostgreSQL cannot store: remove it and send again");
    }
    const c = code;
    const reason =
      SQLITE.find(([re]) => re.test(c))?.[1] ??
      (Object.hasOwn(FS, c) ? FS[c] : undefined) ??
      (PG_CODE.test(c) ? "unreachable" : undefined) ??
      PG_STATE.find(([re]) => re.test(c))?.[1];
    if (reason) return new AppError("unavailable", `storage failure (${code}): ${HELP[reason]}; nothing was written`, { reason });
  }
  return null;
}
