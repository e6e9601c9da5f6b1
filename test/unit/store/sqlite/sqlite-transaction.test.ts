import { describe, expect, test } from "bun:test";
import { makeServices } from "../../../helpers/services";
import { dbRows, onPostgres } from "../../../helpers/engine";

// Storage.transaction on either engine: a throw rolls back, a nested call joins.
// (PostgreSQL's own transaction details are tested in postgres-open.test.ts.)
const keys = async (s: ReturnType<typeof makeServices>) =>
  (await dbRows<{ key: string }>(s, "SELECT key FROM meta WHERE key LIKE 'tx-%' ORDER BY key")).map((r) => r.key);

describe("Storage.transaction", () => {
  test("a throw rolls back everything written inside; a write outside survives", async () => {
    const s = makeServices();
    const tx = s.storage.transaction(async (t) => {
      await t.meta.set("tx-a", "1");
      await Bun.sleep(20);
      await t.meta.set("tx-b", "1");
      throw new Error("boom");
    });
    await expect(tx).rejects.toThrow("boom");
    await s.storage.meta.set("tx-outside", "1");
    expect(await keys(s)).toEqual(["tx-outside"]);
    await s.close();
  });

  // SQLite only: one connection, so its write lock holds every other write back until the
  // transaction ends; PostgreSQL lets a write on another connection go ahead (row locks).
  test.skipIf(onPostgres)("SQLite: a write from elsewhere waits for an open transaction and survives its rollback [SQLite write lock]", async () => {
    const s = makeServices();
    const h = s.store.sqlite;
    const put = (k: string) => `INSERT INTO meta(key, value) VALUES ('${k}', '1')`;
    let outsideDone = false;
    const tx = s.storage.transaction(async () => {
      h.run(put("tx-a"));
      await Bun.sleep(20);
      expect(outsideDone).toBe(false); // the outside write is held back while the transaction is open
      h.run(put("tx-b"));
      throw new Error("boom");
    });
    const lock = s.storage.transaction(async () => {
      h.run(put("tx-outside"));
      outsideDone = true;
    });
    await expect(tx).rejects.toThrow("boom");
    await lock;
    expect(await keys(s)).toEqual(["tx-outside"]);
    await s.close();
  });

  test("a nested transaction joins the outer one and commits with it, and rolls back with it", async () => {
    const s = makeServices();
    await s.storage.transaction(async (tx) => {
      await tx.meta.set("tx-1", "1");
      await tx.transaction(async (inner) => inner.meta.set("tx-2", "1"));
    });
    expect(await keys(s)).toEqual(["tx-1", "tx-2"]);
    await expect(
      s.storage.transaction(async (tx) => {
        await tx.transaction(async (inner) => inner.meta.set("tx-3", "1"));
        throw new Error("outer fails");
      }),
    ).rejects.toThrow("outer fails");
    expect(await keys(s)).toEqual(["tx-1", "tx-2"]);
    await s.close();
  });
});
