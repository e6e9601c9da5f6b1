import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { applyChanges } from "./apply";
import { claudeCode } from "./claude-code";
import { codex } from "./codex";
import { invocation } from "./command";
import { gemini } from "./gemini";
import { readText, type HarnessModule } from "./harness";
import { readManifest, sha256 } from "./manifest";
import { opencode } from "./opencode";
import { HARNESS_IDS, type FileChange, type HarnessId, type HarnessInfo, type WiringCheck } from "./types";

/**
 * Wiring coding-agent harnesses to memsvc: hooks (or a plugin) for recall
 * and capture, and the `memsvc mcp` server, for Claude Code, Codex CLI,
 * Gemini CLI and opencode. Plans are pure reads; applyChanges writes, with
 * backups and a manifest that lets uninstall restore files exactly.
 */

const MODULES: Record<HarnessId, HarnessModule> = { "claude-code": claudeCode, codex, gemini, opencode };

/** Each harness, found when its home folder exists or its CLI is on PATH. */
export function findHarnesses(env: NodeJS.ProcessEnv): HarnessInfo[] {
  return HARNESS_IDS.map((id) => {
    const m = MODULES[id];
    const home = m.homes(env).find((d) => existsSync(d));
    if (home) return { id, name: m.name, found: true, evidence: `${home} exists` };
    const cli = Bun.which(m.cli, { PATH: env.PATH ?? "" });
    if (cli) return { id, name: m.name, found: true, evidence: `${m.cli} is on PATH (${cli})` };
    return { id, name: m.name, found: false, evidence: `no ${m.homes(env).join(" or ")}, no ${m.cli} on PATH` };
  });
}

/**
 * What install would change for one harness: hooks (or its plugin) and the
 * MCP server. `command` is this memsvc's argv (VAR=value words first, as
 * selfArgv gives it). Files already as wanted are left out: a second plan
 * after applying the first is empty. Throws WiringError for a file that
 * cannot be read as its format.
 */
export function planWiring(id: HarnessId, opts: { command: string[]; env: NodeJS.ProcessEnv; claudeSettings?: string }): FileChange[] {
  const inv = invocation(opts.command);
  return MODULES[id]
    .wire({ env: opts.env, inv, claudeSettings: opts.claudeSettings })
    .filter((e) => e.after !== e.before)
    .map((e) => ({ ...e, file: resolve(e.file), harness: id, action: "install" as const }));
}

/**
 * What uninstall would change for one harness. A file that still hashes to
 * what memsvc wrote gets its pre-memsvc bytes back from the backup (or is
 * deleted when memsvc created it); one changed since (Claude Code rewrites
 * ~/.claude.json all the time) loses only memsvc's entries.
 */
export function planUnwiring(id: HarnessId, opts: { env: NodeJS.ProcessEnv; home: string; claudeSettings?: string }): FileChange[] {
  const m = MODULES[id];
  const manifest = readManifest(opts.home);
  // A named Claude settings file (a project's) is taken out alone: the user-scope MCP entry serves other projects too.
  const files = new Set(opts.claudeSettings ? [resolve(opts.claudeSettings)] : m.files(opts.env).map((f) => resolve(f)));
  if (!opts.claudeSettings) for (const [file, rec] of Object.entries(manifest.files)) if (rec.harness === id) files.add(file);
  const changes: FileChange[] = [];
  for (const file of files) {
    const text = readText(file);
    if (text === null) continue;
    const stripped = m.strip(file, text, opts.env);
    if (stripped.after === text) continue;
    const rec = manifest.files[file];
    const base = { file, before: text, harness: id, action: "uninstall" as const };
    if (rec && sha256(Buffer.from(text, "utf8")) === rec.sha256) {
      if (!rec.existed) {
        changes.push({ ...base, after: null, summary: ["delete: memsvc created it and it is as memsvc left it"], removeDirs: rec.createdDirs });
        continue;
      }
      const backup = rec.backup ? readText(rec.backup) : null;
      // The backup is the pre-memsvc file only if it holds nothing of memsvc's (an older install may have written it).
      if (backup !== null && m.strip(file, backup, opts.env).after === backup) {
        changes.push({ ...base, after: backup, restoreFrom: rec.backup!, summary: [`restore the version from before memsvc (${rec.backup})`] });
        continue;
      }
    }
    const changedSince = rec ? ["changed since memsvc wrote it: only memsvc's entries are taken out"] : [];
    if (stripped.after === null || (rec && !rec.existed && m.isEmpty(file, stripped.after)))
      changes.push({
        ...base,
        after: null,
        summary: [...changedSince, ...stripped.summary, "delete: nothing else is left in it"],
        removeDirs: rec?.createdDirs,
      });
    else changes.push({ ...base, after: stripped.after, summary: [...changedSince, ...stripped.summary] });
  }
  return changes;
}

/** Whether a harness has memsvc's hooks (or plugin) and MCP server, with what to do about it. */
export function checkWiring(id: HarnessId, opts: { env: NodeJS.ProcessEnv }): WiringCheck {
  return MODULES[id].check(opts.env);
}

export { applyChanges };
export { pluginSource } from "./opencode-plugin";
export { parseOurNotify } from "./codex";
export { HARNESS_IDS, WiringError, type FileChange, type HarnessId, type HarnessInfo, type WiringCheck } from "./types";
export { readManifest as readWiringManifest } from "./manifest";
