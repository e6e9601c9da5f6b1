import { describe, expect, test } from "bun:test";
import { makeServices } from "../../helpers/services";
import { onPostgres } from "../../helpers/engine";

// Storage.transaction on SQLite: one connection, awaits inside, other requests' writes wait.
// SQLite only (its write lock); PostgreSQL's transactions are tested in postgres-open.test.ts.
describe.skipIf(onPostgres)("sqlite Storage.transaction", () => {
  const count = (s: ReturnType<typeof makeServices>) => s.store.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM meta WHERE key LIKE 'tx-%'").get()!.n;
  const put = (k: string) => `INSERT INTO meta(key, value) VALUES ('${k}', '1')`;

  test("a throw rolls back everything written inside, and a write from elsewhere waits and survives", async () => {
    const s = makeServices();
    const h = s.store.sqlite;
    let outsideDone = false;
    const tx = s.storage.transaction(async () => {
      h.run(put("tx-a"));
      await Bun.sleep(20);
      expect(outsideDone).toBe(false); // the outside write is held back while the transaction is open
      h.run(put("tx-b"));
      throw new Error("boom");
    });
    // A write through the lock, issued while the transaction is open.
    const lock = (s.storage as unknown as { transaction: typeof s.storage.transaction }).transaction(async () => {
      h.run(put("tx-outside"));
      outsideDone = true;
    });
    await expect(tx).rejects.toThrow("boom");
    await lock;
    expect(count(s)).toBe(1);
    expect(h.query("SELECT key FROM meta WHERE key LIKE 'tx-%'").all()).toEqual([{ key: "tx-outside" }]);
    await s.close();
  });

  test("a nested transaction joins the outer one and commits with it", async () => {
    const s = makeServices();
    const h = s.store.sqlite;
    await s.storage.transaction(async (tx) => {
      h.run(put("tx-1"));
      await tx.transaction(async () => void h.run(put("tx-2")));
    });
    expect(count(s)).toBe(2);
    await s.close();
  });
});
