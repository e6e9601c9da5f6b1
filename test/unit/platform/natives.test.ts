import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { PLATFORMS, platformOf, prepareSqlite, runningPlatform, sqliteVecLibrary } from "../../../src/platform/natives";
import { exeFormat } from "../../helpers/exe-format";

test("every platform row is found by its os and arch, and only unknown pairs find none", () => {
  for (const row of Object.values(PLATFORMS)) expect(platformOf(row.os, row.arch)).toBe(row);
  expect(platformOf("freebsd", "x64")).toBeNull();
  expect(platformOf("win32", "arm64")).toBeNull();
});

test("from source, sqlite-vec is the installed package of the running platform, and it loads", () => {
  const row = runningPlatform();
  expect(row.os).toBe(process.platform as typeof row.os);
  expect(row.arch).toBe(process.arch as typeof row.arch);
  const path = sqliteVecLibrary();
  expect(path).toContain(`${row.sqliteVec.package}/${row.sqliteVec.file}`);
  const format = exeFormat(readFileSync(path));
  expect(format?.kind).toBe("library");
  expect(format?.arch).toBe(row.arch);
  prepareSqlite();
  const db = new Database(":memory:");
  db.loadExtension(path, "sqlite3_vec_init");
  expect(db.query<{ v: string }, []>("SELECT vec_version() v").get()?.v).toBe(
    `v${JSON.parse(readFileSync(Bun.resolveSync("sqlite-vec/package.json", import.meta.dir), "utf8")).version}`,
  );
  db.close();
});
