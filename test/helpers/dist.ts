import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildAll, type BuildResult } from "../../build";
import { ROOT } from "./process";

export interface Dist {
  dir: string;
  results: BuildResult[];
}

let pending: Promise<Dist> | null = null;

/**
 * All five platform binaries and SHA256SUMS, built once per `bun test`
 * process and shared by the test files that need them (about 20 s with a
 * warm build cache; the first build also compiles the macOS SQLite).
 */
export function allPlatformBinaries(): Promise<Dist> {
  pending ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), "memsvc-dist-"));
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    return { dir, results: await buildAll(dir, { entry: join(ROOT, "src/main.ts") }) };
  })();
  return pending;
}

/** Build time budget for a beforeAll that waits for allPlatformBinaries (a cold cache on a busy 2-core machine). */
export const DIST_TIMEOUT_MS = 900_000;
