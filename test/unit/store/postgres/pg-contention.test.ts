import { afterAll, expect, test } from "bun:test";
import { AppError } from "../../../../src/errors";
import { openPostgres, type PgHandle } from "../../../../src/store/postgres/open";
import { pgStorage } from "../../../../src/store/postgres/storage";
import { appErrorResponse } from "../../../../src/http/errors";
import { realServerUrl, sharedPgUrl } from "../../../helpers/pg-server";

// A deadlock between two servers' transactions on a real PostgreSQL (each
// handle its own pool, so its own backends): the server aborts one side,
// which reaches the client as a 503 `unavailable` (reason `contention`) with
// nothing of it written, never a 500; the other side commits. PGlite has one
// backend and runs transactions one after the other, so no deadlock can occur there.
const handles: PgHandle[] = [];
afterAll(async () => {
  for (const h of handles) await h.close();
});

test.skipIf(!realServerUrl)(
  "a deadlock aborts one transaction as a 503 (contention) and commits the other",
  async () => {
    const url = await sharedPgUrl();
    const schema = `contention_${process.pid}`;
    const [a, b] = [0, 1].map(() => {
      const h = openPostgres({ url, schema, pool: 2 });
      handles.push(h);
      return pgStorage(h);
    });
    await a.ready();
    await b.ready();
    await a.meta.set("row-1", "0");
    await a.meta.set("row-2", "0");
    // Each side locks one row, waits until the other has locked its own, then asks for the other's.
    let locked = 0;
    const bothLocked = async () => {
      locked++;
      while (locked < 2) await Bun.sleep(20);
    };
    const side = (s: typeof a, first: string, second: string, value: string) =>
      s.transaction(async (tx) => {
        await tx.meta.set(first, value);
        await bothLocked();
        await tx.meta.set(second, value);
        return value;
      });
    const results = await Promise.allSettled([side(a, "row-1", "row-2", "a"), side(b, "row-2", "row-1", "b")]);
    const failed = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
    const won = results.filter((r) => r.status === "fulfilled") as PromiseFulfilledResult<string>[];
    expect(failed).toHaveLength(1);
    expect(won).toHaveLength(1);
    const err = failed[0].reason;
    expect(err).toBeInstanceOf(AppError);
    expect(err.details).toEqual({ reason: "contention" });
    expect(err.message).toContain("40P01");
    const res = appErrorResponse(err);
    expect(res.status).toBe(503);
    expect(((await res.json()) as any).error.code).toBe("unavailable");
    // The winner wrote both rows; nothing of the loser remains.
    expect([await a.meta.get("row-1"), await a.meta.get("row-2")]).toEqual([won[0].value, won[0].value]);
  },
  60_000,
);
