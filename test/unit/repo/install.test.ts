import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

// What `npm install` on the Node version docs/development.md names would warn about, checked without installing:
// engines of every locked package against the oldest Node we claim, and npm's reading of .npmrc.

const ROOT = join(import.meta.dir, "../../..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"));
const npm = Bun.which("npm");

/** ">=22.12.0" -> "22.12.0": the oldest version the project promises to support. */
function floor(range: string): string {
  const m = /^>=\s*(\d+\.\d+\.\d+)$/.exec(range.trim());
  if (!m) throw new Error(`engines range "${range}" is not of the form >=x.y.z`);
  return m[1]!;
}

describe("npm install on the supported Node", () => {
  test("package.json states Node, npm and Bun versions, and the Bun it installs fits them", () => {
    expect(pkg.engines?.node).toBeString();
    expect(pkg.engines?.npm).toBeString();
    expect(pkg.engines?.bun).toBeString();
    expect(Bun.semver.satisfies(pkg.devDependencies.bun, pkg.engines.bun)).toBe(true);
    expect(Bun.semver.satisfies(Bun.version, pkg.engines.bun)).toBe(true);
  });

  test("no locked package requires a newer Node than the oldest one we state", () => {
    const oldest = floor(pkg.engines.node);
    const refusing: string[] = [];
    for (const [path, entry] of Object.entries<any>(lock.packages)) {
      if (path === "" || entry.optional) continue; // optional platform packages are skipped, not warned about
      const wants = entry.engines?.node;
      if (typeof wants === "string" && !Bun.semver.satisfies(oldest, wants)) refusing.push(`${path} (node ${wants})`);
    }
    expect(refusing).toEqual([]);
  });

  test("every dependency install script is reviewed in allowScripts", () => {
    const unreviewed: string[] = [];
    for (const [path, entry] of Object.entries<any>(lock.packages)) {
      if (path === "" || !entry.hasInstallScript) continue;
      const name = path.replace(/^.*node_modules\//, "");
      const covered = Object.keys(pkg.allowScripts ?? {}).some((k) => k === name || k.startsWith(`${name}@`));
      if (!covered) unreviewed.push(name);
    }
    expect(unreviewed).toEqual([]);
    // onnxruntime-node's script would fetch CUDA libraries from NuGet on linux-x64.
    expect(pkg.allowScripts["onnxruntime-node"]).toBe(false);
  });

  test.skipIf(!npm)("npm reads the project's .npmrc without an unknown-key warning", async () => {
    const p = Bun.spawn([npm!, "config", "get", "fund"], { cwd: ROOT, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    expect(code).toBe(0);
    expect(out.trim()).toBe("false");
    expect(err).not.toContain("Unknown project config");
  });
});
