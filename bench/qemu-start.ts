import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary } from "../build";
import { PLATFORMS } from "../src/platform/natives";
import { childEnv, freePort, run } from "../test/helpers/process";
import { qemuMissing, startTimed, underQemu } from "../test/helpers/qemu";
import { round, summarize } from "./lib/stats";

/**
 * Start-up of the linux-arm64 binary under qemu user mode on this x64
 * machine: spawn to first /health 200, for a fresh home (the first start also
 * writes sqlite-vec out to the cache folder) and for later starts of the same
 * home. Emulation makes these figures an upper bound for real arm64 hardware.
 *
 *   bun bench/qemu-start.ts [runs=5] [binary=dist/memsvc-linux-arm64, built when missing]
 */
const runs = Number(process.argv[2] ?? 5);
const missing = qemuMissing();
if (missing) {
  console.log(JSON.stringify({ skipped: missing }));
  process.exit(0);
}

let bin = process.argv[3] ?? join(import.meta.dir, "..", "dist", PLATFORMS["linux-arm64"].binary);
let buildDir: string | null = null;
if (!existsSync(bin)) {
  buildDir = mkdtempSync(join(tmpdir(), "memsvc-bench-arm64-"));
  bin = (await buildBinary({ entry: join(import.meta.dir, "..", "src/main.ts"), platform: "linux-arm64", outfile: join(buildDir, "memsvc") })).outfile;
}

const home = mkdtempSync(join(tmpdir(), "memsvc-bench-home-"));
const env = childEnv(home);
const init = await run(underQemu([bin, "init"]), env, home, 120_000);
if (init.code !== 0) throw new Error(`init failed: ${init.stderr}`);

const samples: number[] = [];
for (let i = 0; i < runs; i++) {
  const port = await freePort();
  const server = await startTimed(underQemu([bin, "server", "--port", String(port)]), env, port, home);
  samples.push(server.startMs);
  server.proc.kill("SIGTERM");
  await server.proc.exited;
}
rmSync(home, { recursive: true, force: true });
if (buildDir) rmSync(buildDir, { recursive: true, force: true });

console.log(
  JSON.stringify(
    {
      bench: "qemu-start",
      binary: bin,
      runs,
      first_start_ms: round(samples[0]!),
      later_starts_ms: runs > 1 ? summarize(samples.slice(1)) : null,
      loadavg: loadavg().map((l) => round(l)),
    },
    null,
    2,
  ),
);
