import { expect, test } from "bun:test";
import { storageFailure } from "../../src/store/sqlite/storage-errors";

const err = (code: string, cause?: unknown) => Object.assign(new Error(`failed with ${code}`, { cause }), { code });

test("SQLite and filesystem storage failures map to 503 unavailable with a reason; everything else is left alone", () => {
  const cases: [unknown, string | null][] = [
    [err("SQLITE_FULL"), "disk_full"],
    [err("ENOSPC"), "disk_full"],
    [err("EDQUOT"), "disk_full"],
    [err("SQLITE_READONLY"), "read_only"],
    [err("SQLITE_READONLY_DBMOVED"), "read_only"],
    [err("EROFS"), "read_only"],
    [err("EACCES"), "read_only"],
    [err("SQLITE_CANTOPEN"), "cannot_open"],
    [err("SQLITE_IOERR_WRITE"), "io_error"],
    [new Error("wrapped", { cause: err("SQLITE_FULL") }), "disk_full"],
    [err("SQLITE_CONSTRAINT_UNIQUE"), null],
    [err("ECONNRESET"), null],
    [new TypeError("x is undefined"), null],
    ["SQLITE_FULL", null],
    [null, null],
  ];
  for (const [e, reason] of cases) {
    const mapped = storageFailure(e);
    expect({ e: String((e as Error)?.message ?? e), reason: mapped?.details?.reason ?? null }).toEqual({ e: String((e as Error)?.message ?? e), reason });
    if (mapped) {
      expect(mapped.code).toBe("unavailable");
      expect(mapped.message).toMatch(/^storage failure \((SQLITE_\w+|E\w+)\): .+; nothing was written$/);
    }
  }
});
