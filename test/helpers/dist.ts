import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BUILD_CACHE, buildAll, buildBinary, type BuildResult } from "../../build";
import { ROOT } from "./process";

export interface Dist {
  dir: string;
  results: BuildResult[];
}

let pending: Promise<Dist> | null = null;

/**
 * All five platform binaries and SHA256SUMS, built once per `bun test`
 * process and shared by the test files that need them (about 20 s with a
 * warm build cache; the first build also compiles the macOS SQLite). They go
 * to one fixed folder in the build cache, replaced by the next run: bun test
 * gives no hook after the last file, and 700 MB per run must not pile up.
 */
export function allPlatformBinaries(): Promise<Dist> {
  pending ??= (async () => {
    const dir = join(BUILD_CACHE, "test-dist");
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return { dir, results: await buildAll(dir, { entry: join(ROOT, "src/main.ts") }) };
  })();
  return pending;
}

/** Build time budget for a beforeAll that waits for allPlatformBinaries (a cold cache on a busy 2-core machine). */
export const DIST_TIMEOUT_MS = 900_000;

let host: Promise<string> | null = null;

/**
 * This machine's binary, built once per `bun test` process (a few seconds
 * with a warm build cache) into one fixed folder of the build cache, for the
 * test files that run the compiled memsvc (the lone-binary checks in
 * binary.test.ts copy their own).
 */
export function hostBinary(): Promise<string> {
  host ??= (async () => {
    const dir = join(BUILD_CACHE, "test-host");
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return (await buildBinary({ entry: join(ROOT, "src/main.ts"), outfile: join(dir, "memsvc") })).outfile;
  })();
  return host;
}
