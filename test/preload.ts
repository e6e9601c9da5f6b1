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

// MEMSVC_TEST_ENGINE=postgres: one PGlite database (with pgvector) for this
// test process; every home the tests make gets a schema in it (test/helpers/engine.ts).
if (process.env.MEMSVC_TEST_ENGINE === "postgres") {
  const { startPglite } = await import("./helpers/pglite");
  process.env.MEMSVC_TEST_DATABASE_URL = (await startPglite()).url;
}

// On macOS the tests open databases through the SQLite build.ts makes (Bun's
// system one cannot load sqlite-vec): make it once, like `npm start` does.
if (process.platform === "darwin") {
  const { buildSqlite, hostPlatform } = await import("../build");
  const { PLATFORMS } = await import("../src/platform/natives");
  await buildSqlite(PLATFORMS[hostPlatform()]);
}
