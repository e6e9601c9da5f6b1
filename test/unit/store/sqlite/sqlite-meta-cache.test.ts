import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cachedMeta, deleteMeta, openStore, setMeta, transact, type Store } from "../../../../src/store/sqlite/open";
import { onPostgres } from "../../../helpers/engine";

// cachedMeta (the re-embed cursor the word weights' memory count reads once per
// prompt word): this connection's own writes show at once, a rolled-back write
// never shows, another process's write shows once the entry is older than the
// allowed age. SQLite's own code: the PostgreSQL run has nothing to add.
const sqliteOnly = (name: string, fn: () => void) => test.skipIf(onPostgres)(`${name} [SQLite meta cache]`, fn);
const HOUR = 3_600_000;
const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open(file?: string): Store {
  if (!file) {
    const dir = mkdtempSync(join(tmpdir(), "memsvc-meta-cache-"));
    dirs.push(dir);
    file = join(dir, "memsvc.db");
  }
  const s = openStore(file);
  stores.push(s);
  return s;
}

sqliteOnly("this connection's setMeta and deleteMeta show at once, however long entries may live", () => {
  const s = open();
  expect(cachedMeta(s, "reembed_cursor", HOUR)).toBeNull();
  setMeta(s, "reembed_cursor", "0");
  expect(cachedMeta(s, "reembed_cursor", HOUR)).toBe("0");
  setMeta(s, "reembed_cursor", "42");
  expect(cachedMeta(s, "reembed_cursor", HOUR)).toBe("42");
  deleteMeta(s, "reembed_cursor");
  expect(cachedMeta(s, "reembed_cursor", HOUR)).toBeNull();
});

sqliteOnly("a write rolled back is never served; reads inside a transaction see the transaction's value", () => {
  const s = open();
  setMeta(s, "reembed_cursor", "7");
  expect(cachedMeta(s, "reembed_cursor", HOUR)).toBe("7");
  expect(() =>
    transact(s.sqlite, () => {
      setMeta(s, "reembed_cursor", "8");
      expect(cachedMeta(s, "reembed_cursor", HOUR)).toBe("8");
      throw new Error("boom");
    }),
  ).toThrow("boom");
  expect(cachedMeta(s, "reembed_cursor", HOUR)).toBe("7");
});

sqliteOnly("another process's write shows once the entry is older than the allowed age", async () => {
  const a = open();
  const b = open(a.file);
  expect(cachedMeta(a, "reembed_cursor", HOUR)).toBeNull();
  setMeta(b, "reembed_cursor", "0");
  // Kept: within the hour, a's entry stands (this is the read the cache saves).
  expect(cachedMeta(a, "reembed_cursor", HOUR)).toBeNull();
  await Bun.sleep(5);
  expect(cachedMeta(a, "reembed_cursor", 1)).toBe("0");
  deleteMeta(b, "reembed_cursor");
  expect(cachedMeta(a, "reembed_cursor", 0)).toBeNull();
});

sqliteOnly("transact commits what its function wrote and rolls it back on a throw; nested, it joins the outer transaction", () => {
  const s = open();
  transact(s.sqlite, () => setMeta(s, "k1", "1"));
  expect(() =>
    transact(s.sqlite, () => {
      setMeta(s, "k2", "1");
      transact(s.sqlite, () => setMeta(s, "k3", "1"));
      throw new Error("boom");
    }),
  ).toThrow("boom");
  const keys = s.sqlite
    .query<{ key: string }, []>("SELECT key FROM meta WHERE key LIKE 'k%' ORDER BY key")
    .all()
    .map((r) => r.key);
  expect(keys).toEqual(["k1"]);
});
