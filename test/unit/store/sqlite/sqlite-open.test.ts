import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore, type Store } from "../../../../src/store/sqlite/open";
import { SQLITE_CACHE_KIB } from "../../../../src/store/sqlite/tuning";
import { onPostgres } from "../../../helpers/engine";

// The connection settings every SQLite store runs with. The page cache is kept
// small on purpose (tuning.ts SQLITE_CACHE_KIB: a large one made every COMMIT
// after a b-tree split scan it whole); a change back must be a decision.
const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test.skipIf(onPostgres)("a store opens in WAL mode with its synchronous level, foreign keys and the small page cache [SQLite]", () => {
  const dir = mkdtempSync(join(tmpdir(), "memsvc-open-"));
  dirs.push(dir);
  const s = openStore(join(dir, "memsvc.db"));
  stores.push(s);
  const pragma = (name: string) => Object.values(s.sqlite.query(`PRAGMA ${name}`).get() as Record<string, unknown>)[0];
  expect(pragma("journal_mode")).toBe("wal");
  expect(pragma("synchronous")).toBe(1); // NORMAL
  expect(pragma("foreign_keys")).toBe(1);
  expect(pragma("cache_size")).toBe(-SQLITE_CACHE_KIB);
  expect(SQLITE_CACHE_KIB).toBeLessThanOrEqual(16384);
});
