import { spawnSync } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { basename, isAbsolute, relative, resolve, sep } from "node:path";

/**
 * The few git facts anchors need, read with the git CLI (no library: the
 * CLI is what the developer's repository is managed with, it understands
 * every repository layout, worktrees and config, and it is already there
 * wherever a repository is).
 */

const GIT_TIMEOUT_MS = 10_000;

/** stdout of a git command, or null when git is missing, fails or times out. */
export function git(dir: string, args: string[], timeoutMs = GIT_TIMEOUT_MS): string | null {
  try {
    const r = spawnSync("git", ["-C", dir, ...args], {
      encoding: "utf8",
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" },
    });
    return r.status === 0 && typeof r.stdout === "string" ? r.stdout : null;
  } catch {
    return null;
  }
}

export interface RepoInfo {
  /** Absolute path of the working tree's root. */
  root: string;
  /** What the server calls the repository: its remote URL without credentials, else the root folder's name. */
  repo: string;
  branch: string | null;
  head: string | null;
}

/**
 * A remote URL as a stable, credential-free name: `git@host:o/r.git`,
 * `https://user:token@host/o/r.git` and `ssh://git@host/o/r` all become
 * `host/o/r`.
 */
export function normalizeRemote(url: string): string {
  let u = url.trim();
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/)(.+)$/.exec(u);
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(u)) u = `${scp[1]}/${scp[2]}`;
  else {
    try {
      const parsed = new URL(u);
      if (parsed.protocol === "file:") return basename(parsed.pathname.replace(/\/+$/, "").replace(/\.git$/, ""));
      u = `${parsed.hostname.toLowerCase()}${parsed.port ? `:${parsed.port}` : ""}${parsed.pathname}`;
    } catch {
      // A local path used as a remote: its folder name says which repository it is.
      return basename(u.replace(/[\\/]+$/, "").replace(/\.git$/, ""));
    }
  }
  return u.replace(/\/+$/, "").replace(/\.git$/, "");
}

/** The repository that holds `dir`, or null when there is none (or no git). */
export function repoInfo(dir: string): RepoInfo | null {
  if (!dir || !existsSync(dir)) return null;
  const top = git(dir, ["rev-parse", "--show-toplevel"])?.trim();
  if (!top) return null;
  const remotes = (git(top, ["remote"]) ?? "")
    .split("\n")
    .map((r) => r.trim())
    .filter(Boolean);
  const remote = remotes.includes("origin") ? "origin" : remotes[0];
  const url = remote ? git(top, ["remote", "get-url", remote])?.trim() : null;
  const branch = git(top, ["rev-parse", "--abbrev-ref", "HEAD"])?.trim() || null;
  const head = git(top, ["rev-parse", "--verify", "-q", "HEAD"])?.trim() || null;
  return { root: top, repo: url ? normalizeRemote(url) : basename(top), branch: branch === "HEAD" ? null : branch, head };
}

/** The commit HEAD pointed at, at `iso` (the newest commit at or before it), else HEAD. */
export function commitAt(info: RepoInfo, iso: string | null): string | null {
  if (!info.head) return null;
  if (!iso) return info.head;
  const at = git(info.root, ["log", "-1", "--format=%H", `--before=${iso}`, "HEAD"])?.trim();
  return at || info.head;
}

/** A path a tool call named, relative to the repository root; null when it lies outside. */
export function repoRelative(root: string, cwd: string | null, p: string): string | null {
  const abs = isAbsolute(p) ? p : resolve(cwd ?? root, p);
  const inside = (a: string) => {
    const rel = relative(root, a);
    return !rel || rel.startsWith("..") || isAbsolute(rel) ? null : rel.split(sep).join("/");
  };
  // git reports the root with symlinks resolved (macOS /tmp is /private/tmp); the harness may not.
  let real: string | null = null;
  try {
    real = realpathSync(abs);
  } catch {
    /* a file deleted since: only the path as given */
  }
  return inside(abs) ?? (real ? inside(real) : null);
}
