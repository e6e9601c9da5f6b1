import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { HarnessCliProvider } from "../config";

/** The three harnesses whose headless mode can stand in for the language model. */
export const HARNESS_CLIS: readonly { provider: HarnessCliProvider; bin: string; name: string }[] = [
  { provider: "claude-cli", bin: "claude", name: "Claude Code" },
  { provider: "codex-cli", bin: "codex", name: "Codex CLI" },
  { provider: "gemini-cli", bin: "gemini", name: "Gemini CLI" },
];

/**
 * The first executable file named `bin` on `env.PATH`, as a shell would find
 * it; null when there is none. On Windows npm installs these CLIs as `.cmd`
 * shims next to a `.exe` or none, so both are tried, in PATHEXT order.
 */
export function findOnPath(bin: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): string | null {
  const path = (platform === "win32" ? (env.Path ?? env.PATH) : env.PATH) ?? "";
  const sep = platform === "win32" ? ";" : delimiter;
  const names = platform === "win32" ? windowsNames(bin, env) : [bin];
  for (const dir of path.split(sep)) {
    if (!dir) continue;
    for (const name of names) {
      const file = join(dir, name);
      if (isExecutableFile(file, platform)) return file;
    }
  }
  return null;
}

function windowsNames(bin: string, env: NodeJS.ProcessEnv): string[] {
  const exts = (env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD")
    .split(";")
    .map((e) => e.toLowerCase())
    .filter((e) => e === ".exe" || e === ".cmd");
  return exts.length > 0 ? exts.map((e) => bin + e) : [`${bin}.exe`, `${bin}.cmd`];
}

export function isExecutableFile(file: string, platform: NodeJS.Platform = process.platform): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    // Windows has no execute bit: the extension is what makes it runnable.
    if (platform !== "win32") accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The harness CLIs installed on this PATH (for `memsvc setup` to offer as the model). */
export function findHarnessClis(env: NodeJS.ProcessEnv): { provider: HarnessCliProvider; command: string; name: string }[] {
  const found: { provider: HarnessCliProvider; command: string; name: string }[] = [];
  for (const cli of HARNESS_CLIS) {
    const command = findOnPath(cli.bin, env);
    if (command) found.push({ provider: cli.provider, command, name: cli.name });
  }
  return found;
}
