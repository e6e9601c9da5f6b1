import { existsSync, readdirSync, statSync } from "node:fs";
import { homedir, hostname } from "node:os";
import { join } from "node:path";
import { flatDir, flatten, readFlatLine } from "./flatten";
import { readCodexLine } from "./reader-codex";
import { readGeminiSession } from "./reader-gemini";
import { opencodeSessionFiles, readOpencodeSession } from "./reader-opencode";
import { readClaudeLine, readGenericLine } from "./readers";
import type { Format, LineReader } from "./transcript";

export const HARNESSES = ["claude", "codex", "gemini", "opencode"] as const;
export type Harness = (typeof HARNESSES)[number];

/** The `source_agent` a harness's sessions are sent with when config.json sets no sourceAgent (as MCP clients name themselves). */
export const HARNESS_AGENT: Record<Harness, string> = { claude: "claude-code", codex: "codex-cli", gemini: "gemini-cli", opencode: "opencode" };

export const FORMAT_READERS: Record<Format, LineReader> = { claude: readClaudeLine, generic: readGenericLine, codex: readCodexLine, flat: readFlatLine };

/** Where each harness keeps its sessions by default (env as the harnesses read it). */
export function defaultRoot(harness: Harness, env: NodeJS.ProcessEnv = process.env): string {
  const home = homedir();
  switch (harness) {
    case "claude":
      return join(home, ".claude", "projects");
    case "codex":
      return join(env.CODEX_HOME || join(home, ".codex"), "sessions");
    case "gemini":
      return join(home, ".gemini", "tmp");
    case "opencode":
      return join(env.XDG_DATA_HOME || join(home, ".local", "share"), "opencode", "storage");
  }
}

export interface Found {
  path: string;
  format: Format;
  harness: Harness;
}

const byMtime = (files: string[]) =>
  files
    .map((f) => ({ f, t: statSync(f).mtimeMs }))
    .sort((a, b) => a.t - b.t)
    .map((x) => x.f);

/** Files ending in `suffix` down to `depth` folders below `dir`. */
function walk(dir: string, depth: number, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const visit = (d: string, level: number) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isFile() && keep(entry.name)) out.push(p);
      else if (entry.isDirectory() && level < depth) visit(p, level + 1);
    }
  };
  visit(dir, 0);
  return out;
}

/**
 * Every session of one harness under `root`, oldest first, as transcripts the
 * capture pipeline reads. Gemini CLI and opencode sessions are first copied
 * into their flat JSONL under `stateDir` (only messages not copied before).
 */
export function discover(harness: Harness, root: string, stateDir: string): Found[] {
  switch (harness) {
    case "claude":
      return byMtime(walk(root, 1, (n) => n.endsWith(".jsonl"))).map((path) => ({ path, format: "claude", harness }));
    case "codex":
      // sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl
      return byMtime(walk(root, 3, (n) => n.startsWith("rollout-") && n.endsWith(".jsonl"))).map((path) => ({ path, format: "codex", harness }));
    case "gemini":
      return byMtime(walk(root, 2, (n) => n.startsWith("session-") && n.endsWith(".json")).filter((f) => /[\\/]chats[\\/][^\\/]+$/.test(f))).flatMap((file) => {
        const session = readGeminiSession(file);
        return session ? [{ path: flatten(flatDir(stateDir), session), format: "flat" as const, harness }] : [];
      });
    case "opencode":
      return byMtime(opencodeSessionFiles(root)).flatMap((file) => {
        const session = readOpencodeSession(root, file);
        return session ? [{ path: flatten(flatDir(stateDir), session), format: "flat" as const, harness }] : [];
      });
  }
}

/**
 * config.json's sourceAgent, when the user set one, names every session; otherwise
 * (it defaults to the host name) the harness does, so memories say whether
 * Claude Code, Codex, Gemini or opencode worked on them.
 */
export function sourceAgentFor(config: { sourceAgent: string }, harness: Harness | null): string {
  if (!harness || config.sourceAgent !== hostname()) return config.sourceAgent;
  return HARNESS_AGENT[harness];
}
