import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hostPlatform } from "../../build";
import { PLATFORMS } from "../../src/platform/natives";
import { DIST_TIMEOUT_MS, hostBinaryDist } from "../helpers/dist";
import { onPostgres } from "../helpers/engine";
import { ROOT } from "../helpers/process";

// install.sh against what `npm run build` leaves in dist/ (this machine's
// binary under its release name, and SHA256SUMS), installing into a
// temporary PREFIX with /bin/sh. One build per run, shared by every test.

const INSTALL = join(ROOT, "install.sh");
const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;
const NAME = PLATFORMS[hostPlatform()].binary;
const THREE_WAYS = ["Ways to install memsvc:", "sh install.sh ", "sh install.sh --from <folder>", "npm install && npm run build && sh install.sh"];
let distDir: string;

// PostgreSQL run: engine-independent (the binaries' structure and install.sh touch no store): covered by the SQLite run.
const engineIndependent = onPostgres;
beforeAll(async () => {
  if (engineIndependent) return;
  distDir = (await hostBinaryDist()).dir;
}, DIST_TIMEOUT_MS);

// Each may hold a copy of a 160 MB binary.
const temps: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

function install(args: string[], env: Record<string, string> = {}, script = INSTALL) {
  const home = tempDir("memsvc-install-home-");
  const p = Bun.spawnSync(["/bin/sh", script, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

/** A checkout-like folder: install.sh and package.json, and dist/ when given. */
function checkout(dist?: string): string {
  const dir = tempDir("memsvc-checkout-");
  copyFileSync(INSTALL, join(dir, "install.sh"));
  copyFileSync(join(ROOT, "package.json"), join(dir, "package.json"));
  if (dist) symlinkSync(dist, join(dir, "dist"));
  return dir;
}

function expectInstalled(prefix: string, stdout: string) {
  const installed = join(prefix, "bin", "memsvc");
  expect(readdirSync(join(prefix, "bin"))).toEqual(["memsvc"]);
  expect(statSync(installed).mode & 0o777).toBe(0o755);
  // The very bytes of this platform's build.
  expect(readFileSync(installed).equals(readFileSync(join(distDir, NAME)))).toBe(true);
  expect(Bun.spawnSync([installed, "--version"]).stdout.toString().trim()).toBe(VERSION);
  expect(stdout).toContain(NAME);
  expect(stdout).toContain("memsvc setup");
  expect(stdout).not.toContain("memsvc init");
}

test.skipIf(engineIndependent)("npm run build's dist/ holds the binary under its release name, listed in SHA256SUMS", () => {
  expect(readdirSync(distDir).sort()).toEqual(["SHA256SUMS", "memsvc", NAME].sort());
  expect(statSync(join(distDir, NAME)).ino).toBe(statSync(join(distDir, "memsvc")).ino);
  const hash = new Bun.CryptoHasher("sha256").update(readFileSync(join(distDir, NAME))).digest("hex");
  expect(readFileSync(join(distDir, "SHA256SUMS"), "utf8")).toBe(`${hash}  ${NAME}\n`);
});

test.skipIf(engineIndependent)(
  "install.sh --from dist installs this machine's binary 0755 under PREFIX/bin, checksummed, and says memsvc setup next",
  () => {
    const prefix = tempDir("memsvc-prefix-");
    const r = install(["--from", distDir, "--prefix", prefix]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expectInstalled(prefix, r.stdout);
    const hash = readFileSync(join(distDir, "SHA256SUMS"), "utf8").split(" ")[0]!;
    expect(r.stdout).toContain(`(sha256 ${hash})`);
    expect(r.stdout).toContain("is not on your PATH");
  },
  60_000,
);

test.skipIf(engineIndependent)(
  "install.sh with no option in a checkout installs from the dist/ beside it",
  () => {
    const dir = checkout(distDir);
    const prefix = tempDir("memsvc-prefix-");
    const r = install(["--prefix", prefix], {}, join(dir, "install.sh"));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${NAME} from ${join(dir, "dist")}`);
    expectInstalled(prefix, r.stdout);
  },
  60_000,
);

test.skipIf(engineIndependent)(
  "install.sh takes MEMSVC_DIST and PREFIX from the environment and replaces an older install",
  () => {
    const prefix = tempDir("memsvc-prefix-");
    const r1 = install([], { MEMSVC_DIST: distDir, PREFIX: prefix });
    expect(r1.code).toBe(0);
    writeFileSync(join(prefix, "bin", "memsvc"), "#!/bin/sh\necho old\n");
    const r2 = install([], { MEMSVC_DIST: distDir, PREFIX: prefix, PATH: `${join(prefix, "bin")}:${process.env.PATH}` });
    expect(r2.code).toBe(0);
    expect(r2.stdout).not.toContain("is not on your PATH");
    expect(statSync(join(prefix, "bin", "memsvc")).size).toBe(statSync(join(distDir, NAME)).size);
  },
  60_000,
);

test.skipIf(engineIndependent || (!Bun.which("curl") && !Bun.which("wget")))(
  "install.sh downloads from a release URL (--base-url) and verifies the download",
  async () => {
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
      const p = Bun.spawn(["/bin/sh", INSTALL, "--base-url", `http://127.0.0.1:${host.port}/releases/${VERSION}`, "--prefix", prefix], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: prefix, MEMSVC_DIST: "/nonexistent" },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
      expect(stderr).toBe("");
      expect(code).toBe(0);
      // --base-url won over the MEMSVC_DIST twin of the other source.
      expect(served.sort()).toEqual(["SHA256SUMS", NAME].sort());
      expect(statSync(join(prefix, "bin", "memsvc")).mode & 0o777).toBe(0o755);
    } finally {
      host.stop(true);
    }
  },
  60_000,
);

test.skipIf(engineIndependent)(
  "a binary whose checksum does not match is refused: non-zero exit, nothing installed",
  () => {
    const bad = tempDir("memsvc-baddist-");
    copyFileSync(join(distDir, "SHA256SUMS"), join(bad, "SHA256SUMS"));
    const bytes = readFileSync(join(distDir, NAME));
    bytes[bytes.length >> 1] ^= 0xff; // one flipped byte in the middle
    writeFileSync(join(bad, NAME), bytes);
    const prefix = tempDir("memsvc-prefix-");
    const r = install(["--from", bad, "--prefix", prefix]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("checksum mismatch");
    expect(existsSync(join(prefix, "bin"))).toBe(false);
  },
  60_000,
);

test.skipIf(engineIndependent)(
  "a release folder without this platform's line in SHA256SUMS, without the binary, or without SHA256SUMS is refused",
  () => {
    const noLine = tempDir("memsvc-baddist-");
    copyFileSync(join(distDir, NAME), join(noLine, NAME));
    writeFileSync(join(noLine, "SHA256SUMS"), `${"0".repeat(64)}  memsvc-plan9-x64\n`);
    const prefix = tempDir("memsvc-prefix-");
    const r1 = install(["--from", noLine, "--prefix", prefix]);
    expect(r1.code).not.toBe(0);
    expect(r1.stderr).toContain(`SHA256SUMS lists no ${NAME}`);
    const noBinary = tempDir("memsvc-baddist-");
    copyFileSync(join(distDir, "SHA256SUMS"), join(noBinary, "SHA256SUMS"));
    const r2 = install(["--from", noBinary, "--prefix", prefix]);
    expect(r2.code).not.toBe(0);
    expect(r2.stderr).toContain(`${join(noBinary, NAME)} does not exist`);
    // A dist/ from before build.ts wrote SHA256SUMS: the message says which command writes it.
    const oldBuild = tempDir("memsvc-baddist-");
    copyFileSync(join(distDir, "memsvc"), join(oldBuild, "memsvc"));
    const r3 = install(["--from", oldBuild, "--prefix", prefix]);
    expect(r3.code).not.toBe(0);
    expect(r3.stderr).toContain(`${join(oldBuild, "SHA256SUMS")} does not exist`);
    expect(r3.stderr).toContain("`npm run build` writes dist/");
    for (const line of THREE_WAYS) expect(r3.stderr).toContain(line);
    expect(existsSync(join(prefix, "bin"))).toBe(false);
  },
  60_000,
);

test.skipIf(engineIndependent || !Bun.which("curl"))(
  "no option and no build: install.sh downloads the latest release, and when that fails names the URL and lists the three ways",
  () => {
    // Nothing listens on port 1: the download fails at once, as with no network.
    const alone = checkout();
    const prefix = tempDir("memsvc-prefix-");
    const r = install(["--prefix", prefix], { MEMSVC_BASE_URL: "http://127.0.0.1:1" }, join(alone, "install.sh"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("could not download http://127.0.0.1:1/SHA256SUMS");
    for (const line of THREE_WAYS) expect(r.stderr).toContain(line);
    expect(existsSync(join(prefix, "bin"))).toBe(false);
  },
);

test.skipIf(engineIndependent)("the latest release's URL is https://github.com/<MEMSVC_REPO>/releases/latest/download, memsvc/memsvc unless set", () => {
  // A curl on PATH that records what it was asked for and fails as offline curl does: no test reaches the network.
  const bin = tempDir("memsvc-fake-curl-");
  const log = join(bin, "requests");
  writeFileSync(
    join(bin, "curl"),
    `#!/bin/sh\nfor a; do case "$a" in http*) echo "$a" >> "${log}" ;; esac; done\necho "curl: (6) Could not resolve host: github.com" >&2\nexit 6\n`,
  );
  chmodSync(join(bin, "curl"), 0o755);
  const path = `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`;
  // A checkout whose dist/ holds a binary but no SHA256SUMS is not a build install.sh can check: it goes to the release.
  const dir = checkout();
  mkdirSync(join(dir, "dist"));
  copyFileSync(join(distDir, "memsvc"), join(dir, "dist", "memsvc"));
  const prefix = tempDir("memsvc-prefix-");

  const r1 = install(["--prefix", prefix], { PATH: path }, join(dir, "install.sh"));
  expect(r1.code).toBe(1);
  expect(r1.stdout).toContain(`${join(dir, "dist")} holds no build`);
  expect(readFileSync(log, "utf8")).toBe("https://github.com/memsvc/memsvc/releases/latest/download/SHA256SUMS\n");
  expect(r1.stderr).toContain("could not download https://github.com/memsvc/memsvc/releases/latest/download/SHA256SUMS");
  for (const line of THREE_WAYS) expect(r1.stderr).toContain(line);

  rmSync(log);
  const r2 = install(["--prefix", prefix], { PATH: path, MEMSVC_REPO: "acme/memsvc-fork" }, join(dir, "install.sh"));
  expect(r2.code).toBe(1);
  expect(readFileSync(log, "utf8")).toBe("https://github.com/acme/memsvc-fork/releases/latest/download/SHA256SUMS\n");
  expect(existsSync(join(prefix, "bin"))).toBe(false);
});

test("install.sh --help lists the three ways; an unknown option is refused", () => {
  const help = install(["--help"]);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("sh install.sh --from <folder>");
  expect(help.stdout).toContain("npm install && npm run build && sh install.sh");
  expect(help.stdout).toContain("MEMSVC_REPO");
  expect(help.stdout).not.toContain("set -eu");
  const bad = install(["--form", "dist"]);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain("unknown option --form");
});
