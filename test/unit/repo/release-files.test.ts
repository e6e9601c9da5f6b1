import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PLATFORMS } from "../../../src/platform/natives";

// The release workflow cannot run here, and install.ps1 has no PowerShell
// here (none in Debian): both are read and held to build.ts's PLATFORMS, the
// one list of release file names, and to install.sh.

const ROOT = join(import.meta.dir, "../../..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const RELEASE_FILES = [...Object.values(PLATFORMS).map((p) => p.binary), "SHA256SUMS"].sort();
const installSh = readFileSync(join(ROOT, "install.sh"), "utf8");
const installPs1 = readFileSync(join(ROOT, "install.ps1"), "utf8");

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}

describe(".github/workflows/release.yml", () => {
  const workflow = Bun.YAML.parse(readFileSync(join(ROOT, ".github/workflows/release.yml"), "utf8")) as any;
  const jobs = Object.values(workflow.jobs) as { "runs-on": string; steps: Step[] }[];
  const steps = jobs.flatMap((job) => job.steps);
  const runs = steps.map((s) => s.run ?? "");
  const indexOfRun = (re: RegExp) => runs.findIndex((r) => re.test(r));

  test("runs on a pushed v* tag and nothing else, and may write releases", () => {
    expect(workflow.on).toEqual({ push: { tags: ["v*"] } });
    expect(workflow.permissions).toEqual({ contents: "write" });
  });

  test("one Linux x64 job checks out, sets up Node 22 or Bun 1.4.5, runs npm ci and the build:all script", () => {
    expect(jobs).toHaveLength(1);
    // build.ts cross-compiles the macOS SQLite only from linux-x64 (or a Mac).
    expect(jobs[0]!["runs-on"]).toMatch(/^ubuntu-/);
    expect(steps[0]!.uses).toMatch(/^actions\/checkout@v\d+$/);
    const node = steps.find((s) => s.uses?.startsWith("actions/setup-node@"));
    const bun = steps.find((s) => s.uses?.startsWith("oven-sh/setup-bun@"));
    expect(String(node?.with?.["node-version"] ?? "") === "22" || bun?.with?.["bun-version"] === pkg.devDependencies.bun).toBe(true);
    const install = indexOfRun(/^npm ci\b/);
    const build = indexOfRun(/^npm run [\w:-]+$/);
    expect(install).toBeGreaterThan(0);
    expect(build).toBeGreaterThan(install);
    const script = runs[build]!.replace(/^npm run /, "");
    expect(pkg.scripts[script]).toBe("bun build.ts --all");
  });

  test("publishes exactly the binaries PLATFORMS names plus SHA256SUMS from dist/, and both install scripts, after the build", () => {
    const publish = indexOfRun(/gh release create|action-gh-release/);
    expect(publish).toBeGreaterThan(indexOfRun(/^npm run /));
    const step = steps[publish]!;
    // Either `gh release create <tag> [flags] <files>` or softprops/action-gh-release's `files:` list.
    const words = step.run ? step.run.split(/\s+/) : String(step.with?.files ?? "").split(/\s+/);
    const uploaded = words.filter((w) => w && !w.startsWith("-") && !w.includes("$") && !w.includes('"'));
    const fromDist = uploaded.filter((w) => w.startsWith("dist/")).map((w) => w.slice("dist/".length));
    expect(fromDist.sort()).toEqual(RELEASE_FILES);
    const others = uploaded.filter((w) => !w.startsWith("dist/") && !["gh", "release", "create"].includes(w));
    expect(others.sort()).toEqual(["install.ps1", "install.sh"]);
    for (const file of others) expect(existsSync(join(ROOT, file))).toBe(true);
  });

  test("the tag must match package.json's version before anything is published", () => {
    const check = indexOfRun(/GITHUB_REF_NAME.*package\.json.*version/);
    expect(check).toBeGreaterThan(-1);
    expect(check).toBeLessThan(indexOfRun(/gh release create|action-gh-release/));
  });
});

describe("install.sh and install.ps1 against the release", () => {
  test("install.sh's uname mapping yields exactly the non-Windows binaries PLATFORMS names", () => {
    const oses = [...installSh.matchAll(/\) os=(\w+) ;;/g)].map((m) => m[1]);
    const arches = [...installSh.matchAll(/\) arch=(\w+) ;;/g)].map((m) => m[1]);
    expect(installSh).toContain("name=memsvc-$os-$arch");
    const names = oses.flatMap((os) => arches.map((arch) => `memsvc-${os}-${arch}`)).sort();
    expect(names).toEqual(
      Object.values(PLATFORMS)
        .filter((p) => p.os !== "win32")
        .map((p) => p.binary)
        .sort(),
    );
  });

  test("install.ps1 fetches the Windows binary PLATFORMS names and SHA256SUMS", () => {
    expect(installPs1).toContain(`$name = "${PLATFORMS["windows-x64"].binary}"`);
    expect(installPs1).toContain('@("SHA256SUMS", $name)');
  });

  test("both scripts default to the same latest-release URL, the repository named once each and overridable by MEMSVC_REPO", () => {
    const code = (script: string) =>
      script
        .split("\n")
        .filter((line) => !line.trimStart().startsWith("#"))
        .join("\n");
    expect(code(installSh).match(/memsvc\/memsvc/g)).toHaveLength(1);
    expect(code(installPs1).match(/memsvc\/memsvc/g)).toHaveLength(1);
    expect(installSh).toContain("repo=${MEMSVC_REPO:-memsvc/memsvc}");
    expect(installPs1).toContain('$Repo = if ($env:MEMSVC_REPO) { $env:MEMSVC_REPO } else { "memsvc/memsvc" }');
    expect(installSh).toContain("latest_url=https://github.com/$repo/releases/latest/download");
    expect(installPs1).toContain('$LatestUrl = "https://github.com/$Repo/releases/latest/download"');
  });

  test("install.ps1 takes a checkout's built dist\\ before the latest release, lists the three ways on failure, and says memsvc setup next", () => {
    const dist = installPs1.indexOf('Join-Path $PSScriptRoot "dist\\SHA256SUMS"');
    const latest = installPs1.indexOf("$BaseUrl = $LatestUrl");
    expect(dist).toBeGreaterThan(-1);
    expect(latest).toBeGreaterThan(dist);
    for (const way of ["install.ps1 -From <folder>", "the latest release", "npm install; npm run build"]) expect(installPs1).toContain(way);
    expect(installPs1).toMatch(/Fail-WithWays "could not download \$BaseUrl\/\$file/);
    expect(installPs1).toContain("memsvc setup");
    expect(installPs1).not.toMatch(/memsvc (init|server|hooks install)\b/);
  });
});
