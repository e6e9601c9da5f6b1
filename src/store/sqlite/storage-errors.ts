import { AppError } from "../../errors";

/**
 * Storage failures are the operator's to fix (free space, make the home
 * writable), not bugs: they become a 503 `unavailable` naming the cause,
 * with `reason` for machines, instead of an anonymous 500. 503 rather than
 * 507 because clients already treat 503 as "retry later, keep your data"
 * (capture does not advance its watermark), which is exactly right here.
 * SQLite rolls the failed transaction back, so nothing is half-written.
 */
export type StorageReason = "disk_full" | "read_only" | "cannot_open" | "io_error";

const SQLITE: [RegExp, StorageReason][] = [
  [/^SQLITE_FULL/, "disk_full"],
  [/^SQLITE_READONLY/, "read_only"],
  [/^SQLITE_CANTOPEN/, "cannot_open"],
  [/^SQLITE_IOERR/, "io_error"],
];
const FS: Record<string, StorageReason> = { ENOSPC: "disk_full", EDQUOT: "disk_full", EROFS: "read_only", EACCES: "read_only", EPERM: "read_only", EIO: "io_error" };

const HELP: Record<StorageReason, string> = {
  disk_full: "the disk holding the service home is full: free some space; writes resume at once",
  read_only: "the service home is read-only or not writable by this process: make it writable; writes resume at once",
  cannot_open: "the database file cannot be opened (a missing folder, no permission, or a read-only disk): check the service home",
  io_error: "the disk holding the service home reported an I/O error: check the disk and the server log",
};

/** The AppError for a storage failure anywhere in `e`'s cause chain, or null when `e` is something else. */
export function storageFailure(e: unknown): AppError | null {
  for (let cur: unknown = e, depth = 0; cur && depth < 5; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code !== "string") continue;
    const reason = SQLITE.find(([re]) => re.test(code))?.[1] ?? (Object.hasOwn(FS, code) ? FS[code] : undefined);
    if (reason) return new AppError("unavailable", `storage failure (${code}): ${HELP[reason]}; nothing was written`, { reason });
  }
  return null;
}
