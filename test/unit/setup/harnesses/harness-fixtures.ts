import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { applyChanges, planUnwiring, planWiring, type FileChange, type HarnessId } from "../../../../src/setup/harnesses";

export const FIXTURES = join(import.meta.dir, "../../../fixtures");
/** A compiled memsvc with its own home, as selfArgv gives it. */
export const COMMAND = ["MEMSVC_HOME=/opt/memsvc home", "/opt/memsvc/bin/memsvc"];

export interface Machine {
  home: string;
  memsvcHome: string;
  env: NodeJS.ProcessEnv;
  path(rel: string): string;
  read(rel: string): string | null;
}

/** A fake user home with fixture files copied to the given places (relative to HOME). PATH is empty: no harness CLI is asked anything. */
export function machine(files: Record<string, string> = {}, dirs: string[] = []): Machine {
  const home = mkdtempSync(join(tmpdir(), "memsvc-wiring-"));
  for (const d of dirs) mkdirSync(join(home, d), { recursive: true });
  for (const [rel, fixture] of Object.entries(files)) {
    mkdirSync(dirname(join(home, rel)), { recursive: true });
    copyFileSync(join(FIXTURES, fixture), join(home, rel));
  }
  const path = (rel: string) => join(home, rel);
  return {
    home,
    memsvcHome: join(home, "memsvc-home"),
    env: { HOME: home, PATH: "" },
    path,
    read: (rel) => (existsSync(path(rel)) ? readFileSync(path(rel), "utf8") : null),
  };
}

export function install(id: HarnessId, m: Machine): FileChange[] {
  const changes = planWiring(id, { command: COMMAND, env: m.env });
  applyChanges(changes, { home: m.memsvcHome });
  return changes;
}

export function uninstall(id: HarnessId, m: Machine): FileChange[] {
  const changes = planUnwiring(id, { env: m.env, home: m.memsvcHome });
  applyChanges(changes, { home: m.memsvcHome });
  return changes;
}

export const fixture = (rel: string) => readFileSync(join(FIXTURES, rel), "utf8");
