import type { StorageReason } from "../failures";

const CODES: [RegExp, StorageReason][] = [
  [/^SQLITE_FULL/, "disk_full"],
  [/^SQLITE_READONLY/, "read_only"],
  [/^SQLITE_CANTOPEN/, "cannot_open"],
  [/^SQLITE_IOERR/, "io_error"],
];

/** The storage reason behind a bun:sqlite error code, or null when the code is not SQLite's. */
export function sqliteFailureReason(code: string): StorageReason | null {
  return CODES.find(([re]) => re.test(code))?.[1] ?? null;
}
