import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = mkdtempSync(join(tmpdir(), "memsvc-test-"));
process.env.MEMSVC_HOME = join(root, "home");
process.env.MEMSVC_CACHE_DIR = join(root, "cache");
process.env.MEMSVC_OFFLINE = "1";
delete process.env.MEMSVC_LLM_BASE_URL;
delete process.env.MEMSVC_LLM_API_KEY;
delete process.env.MEMSVC_LLM_MODEL;
delete process.env.MEMSVC_URL;

// On macOS the tests open databases through the SQLite build.ts makes (Bun's
// system one cannot load sqlite-vec): make it once, like `npm start` does.
if (process.platform === "darwin") {
  const { buildSqlite, hostPlatform } = await import("../build");
  const { PLATFORMS } = await import("../src/platform/natives");
  await buildSqlite(PLATFORMS[hostPlatform()]);
}
