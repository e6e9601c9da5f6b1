import { AppError } from "../errors";
import { postgresFailure } from "./postgres/failures";
import { sqliteFailureReason } from "./sqlite/failures";

/**
 * Storage failures are the operator's to fix (free space, make the home
 * writable), not bugs: they become a 503 `unavailable` naming the cause,
 * with `reason` for machines, instead of an anonymous 500. 503 rather than
 * 507 because clients already treat 503 as "retry later, keep your data"
 * (capture does not advance its watermark), which is exactly right here.
 * SQLite rolls the failed transaction back, so nothing is half-written.
 * Each engine reads its own error codes (sqlite/failures.ts,
 * postgres/failures.ts); this file alone names what they mean to a client.
 */
export type StorageReason = "disk_full" | "read_only" | "cannot_open" | "io_error" | "unreachable";

const FS: Record<string, StorageReason> = {
  ENOSPC: "disk_full",
  EDQUOT: "disk_full",
  EROFS: "read_only",
  EACCES: "read_only",
  EPERM: "read_only",
  EIO: "io_error",
};

const HELP: Record<StorageReason, string> = {
  disk_full: "the disk holding the service home is full: free some space; writes resume at once",
  read_only: "the service home is read-only or not writable by this process: make it writable; writes resume at once",
  cannot_open: "the database file cannot be opened (a missing folder, no permission, or a read-only disk): check the service home",
  io_error: "the disk holding the service home reported an I/O error: check the disk and the server log",
  unreachable:
    "the PostgreSQL database cannot be reached or refused the connection: check that it runs and accepts connections (database_url, database_pool); requests succeed again once it answers",
};

/**
 * The AppError for a storage failure anywhere in `e`'s cause chain (or for a
 * value PostgreSQL refuses to store: a 400), or null when `e` is something else.
 */
export function storageFailure(e: unknown): AppError | null {
  for (let cur: unknown = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const link = cur as { code?: unknown; errno?: unknown };
    const pg = postgresFailure(link);
    // A string PostgreSQL cannot store is the client's to fix, a 400, not a
    // server error. The statement (and its transaction) failed, so nothing of it was written.
    if (pg === "nul_character") {
      return new AppError("invalid", "a text value holds a NUL character (U+0000), which PostgreSQL cannot store: remove it and send again");
    }
    const code = link.code === "ERR_POSTGRES_SERVER_ERROR" && typeof link.errno === "string" ? link.errno : link.code;
    if (typeof code !== "string") continue;
    const reason = sqliteFailureReason(code) ?? (Object.hasOwn(FS, code) ? FS[code] : undefined) ?? pg;
    if (reason) return new AppError("unavailable", `storage failure (${code}): ${HELP[reason]}; nothing was written`, { reason });
  }
  return null;
}
