import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hostPlatform } from "../../build";
import { PLATFORMS } from "../../src/platform/natives";
import { allPlatformBinaries, DIST_TIMEOUT_MS } from "../helpers/dist";
import { onPostgres } from "../helpers/engine";
import { ROOT } from "../helpers/process";

// install.sh against a real release folder (the five binaries and
// SHA256SUMS), installing into a temporary PREFIX with /bin/sh.

const INSTALL = join(ROOT, "install.sh");
let distDir: string;

// PostgreSQL run: engine-independent (the binaries' structure and install.sh touch no store): covered by the SQLite run.
const engineIndependent = onPostgres;
beforeAll(async () => {
  if (engineIndependent) return;
  distDir = (await allPlatformBinaries()).dir;
}, DIST_TIMEOUT_MS);

// Each holds a copy of a 160 MB binary.
const temps: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function install(args: string[], env: Record<string, string> = {}) {
  const home = tempDir("memsvc-install-home-");
  const p = Bun.spawnSync(["/bin/sh", INSTALL, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

test.skipIf(engineIndependent)("install.sh picks this machine's binary, verifies it and installs memsvc 0755 under PREFIX/bin", () => {
  const prefix = tempDir("memsvc-prefix-");
  const r = install(["--from", distDir, "--prefix", prefix]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const installed = join(prefix, "bin", "memsvc");
  expect(readdirSync(join(prefix, "bin"))).toEqual(["memsvc"]);
  expect(statSync(installed).mode & 0o777).toBe(0o755);
  // The very bytes of this platform's release binary.
  expect(readFileSync(installed).equals(readFileSync(join(distDir, PLATFORMS[hostPlatform()].binary)))).toBe(true);
  const version = Bun.spawnSync([installed, "--version"]).stdout.toString().trim();
  expect(version).toBe(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);
  expect(r.stdout).toContain(PLATFORMS[hostPlatform()].binary);
  expect(r.stdout).toContain("memsvc init");
  expect(r.stdout).toContain("memsvc server");
  expect(r.stdout).toContain("is not on your PATH");
}, 60_000);

test.skipIf(engineIndependent)("install.sh takes MEMSVC_DIST and PREFIX from the environment and replaces an older install", () => {
  const prefix = tempDir("memsvc-prefix-");
  const r1 = install([], { MEMSVC_DIST: distDir, PREFIX: prefix });
  expect(r1.code).toBe(0);
  writeFileSync(join(prefix, "bin", "memsvc"), "#!/bin/sh\necho old\n");
  const r2 = install([], { MEMSVC_DIST: distDir, PREFIX: prefix, PATH: `${join(prefix, "bin")}:${process.env.PATH}` });
  expect(r2.code).toBe(0);
  expect(r2.stdout).not.toContain("is not on your PATH");
  expect(statSync(join(prefix, "bin", "memsvc")).size).toBe(statSync(join(distDir, PLATFORMS[hostPlatform()].binary)).size);
}, 60_000);

test.skipIf(engineIndependent || (!Bun.which("curl") && !Bun.which("wget")))("install.sh downloads from a release URL (--base-url) and verifies the download", async () => {
  // A release host on loopback serving the dist folder, as a web server would.
  const served: string[] = [];
  const host = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const name = new URL(req.url).pathname.split("/").pop() ?? "";
      served.push(name);
      const file = Bun.file(join(distDir, name));
      return file.size > 0 && !name.startsWith(".") ? new Response(file) : new Response("not found", { status: 404 });
    },
  });
  try {
    const prefix = tempDir("memsvc-prefix-");
    // Spawned asynchronously: the server above must keep answering while the script downloads.
    const p = Bun.spawn(["/bin/sh", INSTALL, "--base-url", `http://127.0.0.1:${host.port}/releases/0.17.0`, "--prefix", prefix], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: prefix },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(served.sort()).toEqual(["SHA256SUMS", PLATFORMS[hostPlatform()].binary].sort());
    expect(statSync(join(prefix, "bin", "memsvc")).mode & 0o777).toBe(0o755);
  } finally {
    host.stop(true);
  }
}, 60_000);

test.skipIf(engineIndependent)("a binary whose checksum does not match is refused: non-zero exit, nothing installed", () => {
  const bad = tempDir("memsvc-baddist-");
  const name = PLATFORMS[hostPlatform()].binary;
  copyFileSync(join(distDir, "SHA256SUMS"), join(bad, "SHA256SUMS"));
  const bytes = readFileSync(join(distDir, name));
  bytes[bytes.length >> 1] ^= 0xff; // one flipped byte in the middle
  writeFileSync(join(bad, name), bytes);
  const prefix = tempDir("memsvc-prefix-");
  const r = install(["--from", bad, "--prefix", prefix]);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain("checksum mismatch");
  expect(existsSync(join(prefix, "bin"))).toBe(false);
}, 60_000);

test.skipIf(engineIndependent)("a release folder without this platform's line in SHA256SUMS, or without the binary, is refused", () => {
  const name = PLATFORMS[hostPlatform()].binary;
  const noLine = tempDir("memsvc-baddist-");
  copyFileSync(join(distDir, name), join(noLine, name));
  writeFileSync(join(noLine, "SHA256SUMS"), readFileSync(join(distDir, "SHA256SUMS"), "utf8").split("\n").filter((l) => !l.endsWith(`  ${name}`)).join("\n"));
  const prefix = tempDir("memsvc-prefix-");
  const r1 = install(["--from", noLine, "--prefix", prefix]);
  expect(r1.code).not.toBe(0);
  expect(r1.stderr).toContain(`SHA256SUMS lists no ${name}`);
  const noBinary = tempDir("memsvc-baddist-");
  copyFileSync(join(distDir, "SHA256SUMS"), join(noBinary, "SHA256SUMS"));
  const r2 = install(["--from", noBinary, "--prefix", prefix]);
  expect(r2.code).not.toBe(0);
  expect(r2.stderr).toContain("does not exist");
  expect(existsSync(join(prefix, "bin"))).toBe(false);
});
