import { expect, test } from "bun:test";
import { storageFailure } from "../../../src/store/failures";

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

test("PostgreSQL connection losses and server states map to 503 unavailable too", () => {
  const pg = (code: string, errno?: string) => Object.assign(new Error(`pg ${code}`), { code, errno });
  const cases: [unknown, string | null][] = [
    [pg("ERR_POSTGRES_CONNECTION_CLOSED"), "unreachable"],
    [pg("ERR_POSTGRES_CONNECTION_TIMEOUT"), "unreachable"],
    [pg("ERR_POSTGRES_CONNECTION_REFUSED"), "unreachable"],
    [pg("ERR_POSTGRES_SERVER_ERROR", "57P01"), "unreachable"],
    [pg("ERR_POSTGRES_SERVER_ERROR", "08006"), "unreachable"],
    [pg("ERR_POSTGRES_SERVER_ERROR", "53300"), "unreachable"],
    [pg("ERR_POSTGRES_SERVER_ERROR", "53100"), "disk_full"],
    [pg("ERR_POSTGRES_SERVER_ERROR", "25006"), "read_only"],
    [pg("ERR_POSTGRES_SERVER_ERROR", "23505"), null],
    [pg("ERR_POSTGRES_SERVER_ERROR", "42P01"), null],
    [pg("ERR_POSTGRES_SYNTAX_ERROR"), null],
  ];
  for (const [e, reason] of cases) {
    const mapped = storageFailure(e);
    expect({ e: (e as Error).message, reason: mapped?.details?.reason ?? null }).toEqual({ e: (e as Error).message, reason });
    if (mapped) expect(mapped.code).toBe("unavailable");
  }
});

test("a value PostgreSQL cannot store (a NUL character) is the client's 400, not a server error", async () => {
  const pg = (errno: string) => Object.assign(new Error(`pg ${errno}`), { code: "ERR_POSTGRES_SERVER_ERROR", errno });
  for (const errno of ["22021", "22P05"]) {
    const mapped = storageFailure(new Error("wrapped", { cause: pg(errno) }));
    expect(mapped?.code).toBe("invalid");
    expect(mapped?.message).toContain("NUL character (U+0000)");
  }
  // Through a real store: SQLite keeps the NUL, PostgreSQL refuses it and writes nothing.
  const { makeServices } = await import("../../helpers/services");
  const { ingestMemory } = await import("../../../src/core/ingest");
  const { onPostgres, dbRows } = await import("../../helpers/engine");
  const s = makeServices();
  try {
    const write = ingestMemory(s, { content: "The cache warms at boot from the snapshot bucket.", project: "a\u0000b" });
    if (onPostgres) {
      const e = await write.then(
        () => null,
        (x: unknown) => x,
      );
      expect(storageFailure(e)?.code).toBe("invalid");
      expect((await dbRows<{ n: number }>(s, "SELECT count(*) AS n FROM memories"))[0].n).toBe(0);
    } else {
      expect((await write).id).toBeString();
    }
  } finally {
    await s.close();
  }
});
