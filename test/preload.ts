import { afterAll } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = mkdtempSync(join(tmpdir(), "memsvc-test-"));
// Every temporary folder a test makes (homes, repositories, PGlite data) goes
// under this one, and it goes when the test process ends: a full suite used to
// leave ~5,000 folders in /tmp. Child processes inherit it.
const scratch = join(root, "tmp");
mkdirSync(scratch);
process.env.TMPDIR = scratch;
// A global hook (this file is the preload): after the last test file, children stopped.
afterAll(() => rmSync(root, { recursive: true, force: true }));
process.env.MEMSVC_HOME = join(root, "home");
process.env.MEMSVC_CACHE_DIR = join(root, "cache");
process.env.MEMSVC_OFFLINE = "1";
delete process.env.MEMSVC_LLM_BASE_URL;
delete process.env.MEMSVC_LLM_API_KEY;
delete process.env.MEMSVC_LLM_MODEL;
delete process.env.MEMSVC_LLM_PROVIDER;
delete process.env.MEMSVC_URL;
delete process.env.MEMSVC_STORAGE;
delete process.env.MEMSVC_DATABASE_URL;
delete process.env.MEMSVC_DATABASE_SCHEMA;
delete process.env.MEMSVC_DATABASE_POOL;

// MEMSVC_TEST_ENGINE=postgres: one PostgreSQL database (with pgvector) for
// this test process; every home the tests make gets a schema in it
// (test/helpers/engine.ts). On the real server MEMSVC_TEST_PG_URL names (CI),
// a database of its own, dropped at the end; without it, PGlite (a quick local
// run only: CI must measure the real engine, so there it is an error).
if (process.env.MEMSVC_TEST_ENGINE === "postgres") {
  const { realServerUrl, sharedPgUrl } = await import("./helpers/pg-server");
  if (!realServerUrl && process.env.CI === "true") {
    throw new Error(
      "MEMSVC_TEST_ENGINE=postgres on CI needs MEMSVC_TEST_PG_URL (a real PostgreSQL 15 with pgvector: .ci/run starts one); PGlite is for local runs only",
    );
  }
  process.env.MEMSVC_TEST_DATABASE_URL = await sharedPgUrl();
}
{
  const { dropTestDatabases } = await import("./helpers/pg-server");
  afterAll(() => dropTestDatabases());
}

// On macOS the tests open databases through the SQLite build.ts makes (Bun's
// system one cannot load sqlite-vec): make it once, like `npm start` does.
if (process.platform === "darwin") {
  const { buildSqlite, hostPlatform } = await import("../build");
  const { PLATFORMS } = await import("../src/platform/natives");
  await buildSqlite(PLATFORMS[hostPlatform()]);
}
