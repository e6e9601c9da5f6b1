import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BUILD_CACHE, buildAll, buildHost, type BuildResult } from "../../build";
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

let pendingHost: Promise<Dist> | null = null;

/**
 * What `npm run build` leaves in dist/: this machine's binary as memsvc and
 * memsvc-<os>-<cpu>, and SHA256SUMS listing the latter. Built once per
 * `bun test` process (a few seconds) into a fixed build-cache folder, like
 * allPlatformBinaries.
 */
export function hostBinaryDist(): Promise<Dist> {
  pendingHost ??= (async () => {
    const dir = join(BUILD_CACHE, "test-host-dist");
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return { dir, results: [await buildHost(dir, { entry: join(ROOT, "src/main.ts") })] };
  })();
  return pendingHost;
}

/** Build time budget for a beforeAll that waits for allPlatformBinaries (a cold cache on a busy 2-core machine). */
export const DIST_TIMEOUT_MS = 900_000;

/**
 * This machine's binary, built once per `bun test` process (hostBinaryDist's
 * memsvc), for the test files that run the compiled memsvc (the lone-binary
 * checks in binary.test.ts copy their own).
 */
export async function hostBinary(): Promise<string> {
  return join((await hostBinaryDist()).dir, "memsvc");
}
