import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { serverFetch } from "../server-client";
import { join } from "node:path";
import type { Config } from "../config";
import { ensurePrivateDir, PRIVATE_FILE_MODE } from "../private-files";
import { git, repoInfo, type RepoInfo } from "./git";

/**
 * Staleness, on the client where the repository is: the server lists the
 * anchors of a repository (ids, commits, paths), git says what changed since
 * each commit, and the marks go back. Only paths, counts and commit ids leave
 * the machine, never source code.
 *
 * Decisions: "changed" compares the anchor's commit with HEAD (`git diff`),
 * so a file changed and later restored is not stale, and a mark whose files
 * are back as they were is cleared. Uncommitted edits do not count (work in
 * progress is not yet what the code says). A file missing from the working
 * tree marks the memory "missing"; a commit the repository no longer has
 * (history rewritten, another clone) marks "commit-unknown"; a repository
 * capture saw on this machine whose folder is gone marks "repo-deleted".
 */

export interface AnchorToCheck {
  id: string;
  commit: string;
  paths: string[];
}

export interface Mark {
  id: string;
  reason: "changed" | "missing" | "commit-unknown" | "repo-deleted";
  changed_paths: string[];
  missing_paths: string[];
  commits: number;
  last_change: string | null;
}

/** Marks for every anchor whose code moved, and the ids whose code did not. */
export function checkAnchors(info: RepoInfo, anchors: readonly AnchorToCheck[], deadline = Infinity): { marks: Mark[]; fresh: string[]; unchecked: number } {
  const marks: Mark[] = [];
  const fresh: string[] = [];
  const byCommit = new Map<string, AnchorToCheck[]>();
  for (const a of anchors) byCommit.set(a.commit, [...(byCommit.get(a.commit) ?? []), a]);
  let unchecked = 0;
  // No git call may outlive the deadline (the session-start hook has a hard budget).
  const timeout = () => Math.max(100, Math.min(10_000, deadline - Date.now()));
  for (const [commit, group] of byCommit) {
    if (Date.now() > deadline) {
      unchecked += group.length;
      continue;
    }
    const full = git(info.root, ["rev-parse", "--verify", "-q", `${commit}^{commit}`], timeout())?.trim();
    if (!full || !info.head) {
      for (const a of group) marks.push({ id: a.id, reason: "commit-unknown", changed_paths: [], missing_paths: [], commits: 0, last_change: null });
      continue;
    }
    const union = [...new Set(group.flatMap((a) => a.paths))];
    // --no-renames: a renamed file is a deleted anchored path plus a new one.
    const diff = git(info.root, ["diff", "--no-renames", "--name-only", "-z", full, info.head, "--", ...union.map(literal)], timeout());
    if (diff === null) {
      unchecked += group.length;
      continue;
    }
    const changed = new Set(diff.split("\0").filter(Boolean));
    // Per changed path: the commits since the anchor that touched it, with their dates.
    const touched = new Map<string, { sha: string; date: string }[]>();
    if (changed.size > 0) {
      const log =
        git(
          info.root,
          ["log", "--no-renames", "--format=%x01%H%x09%cI", "--name-only", "-z", `${full}..${info.head}`, "--", ...[...changed].map(literal)],
          timeout(),
        ) ?? "";
      for (const entry of log.split("\x01").filter(Boolean)) {
        // "<sha>\t<date>\0\n<file>\0<file>\0" (anchored paths never hold a newline: they are refused).
        const nl = entry.indexOf("\n");
        const [sha, date] = entry
          .slice(0, nl < 0 ? entry.length : nl)
          .replace(/\0/g, "")
          .split("\t");
        const files =
          nl < 0
            ? []
            : entry
                .slice(nl + 1)
                .split("\0")
                .filter(Boolean);
        for (const f of files) touched.set(f, [...(touched.get(f) ?? []), { sha, date }]);
      }
    }
    for (const a of group) {
      const changedPaths = a.paths.filter((p) => changed.has(p));
      const missing = a.paths.filter((p) => !existsSync(join(info.root, p)));
      if (changedPaths.length === 0 && missing.length === 0) {
        fresh.push(a.id);
        continue;
      }
      const commits = new Map<string, string>();
      for (const p of changedPaths) for (const c of touched.get(p) ?? []) commits.set(c.sha, c.date);
      const dates = [...commits.values()].sort();
      marks.push({
        id: a.id,
        reason: missing.length ? "missing" : "changed",
        changed_paths: changedPaths,
        missing_paths: missing,
        commits: commits.size,
        last_change: dates.length ? new Date(Date.parse(dates[dates.length - 1])).toISOString() : null,
      });
    }
  }
  return { marks, fresh, unchecked };
}

/** A pathspec taken literally: an anchored file named `*.ts` or `:x` is that file, not a pattern. */
const literal = (p: string) => `:(literal)${p}`;

// ---- repositories capture has seen on this machine (for "repo-deleted") ----

const reposFile = (home: string) => join(home, "state", "repos.json");

export function knownRepos(home: string): Record<string, string> {
  try {
    const j = JSON.parse(readFileSync(reposFile(home), "utf8"));
    return j && typeof j === "object" && !Array.isArray(j) ? (j as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/** Remembers where a repository lives; written 0600 by rename so a crash leaves the old file. */
export function rememberRepo(home: string, repo: string, root: string): void {
  const all = knownRepos(home);
  if (all[repo] === root) return;
  all[repo] = root;
  ensurePrivateDir(join(home, "state"));
  const tmp = `${reposFile(home)}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(all, null, 2), { mode: PRIVATE_FILE_MODE });
  renameSync(tmp, reposFile(home));
}

function forgetRepo(home: string, repo: string): void {
  const all = knownRepos(home);
  if (!(repo in all)) return;
  delete all[repo];
  const tmp = `${reposFile(home)}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(all, null, 2), { mode: PRIVATE_FILE_MODE });
  renameSync(tmp, reposFile(home));
}

// ---- talking to the server ----

async function call(config: Config, path: string, deadline: number, body?: unknown): Promise<any> {
  const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
  const res = await serverFetch(config, path, {
    method: body === undefined ? "GET" : "POST",
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(Math.max(50, deadline - Date.now())),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* reported below */
  }
  if (!res.ok) throw new Error(json?.error?.message ?? `HTTP ${res.status} from ${path}`);
  return json;
}

export interface RepoReport {
  repo: string;
  root: string | null;
  anchors: number;
  marked: number;
  cleared: number;
  unchecked: number;
  marks: Mark[];
}

/** Checks one repository's anchors and sends the marks. */
export async function checkRepo(config: Config, info: RepoInfo, deadline = Date.now() + 60_000): Promise<RepoReport> {
  const list = await call(config, `/anchors?repo=${encodeURIComponent(info.repo)}`, deadline);
  const anchors: AnchorToCheck[] = Array.isArray(list?.anchors) ? list.anchors : [];
  const { marks, fresh, unchecked } = checkAnchors(info, anchors, deadline);
  let cleared = 0;
  if (marks.length || fresh.length) {
    const r = await call(config, "/memory/stale", deadline, { repo: info.repo, head: info.head, marks, fresh });
    cleared = r?.cleared ?? 0;
  }
  return { repo: info.repo, root: info.root, anchors: anchors.length, marked: marks.length, cleared, unchecked, marks };
}

/** A repository capture saw whose folder is gone: all its anchors are marked, and it is forgotten. */
export async function markDeletedRepo(config: Config, repo: string, deadline: number): Promise<RepoReport> {
  const list = await call(config, `/anchors?repo=${encodeURIComponent(repo)}`, deadline);
  const anchors: AnchorToCheck[] = Array.isArray(list?.anchors) ? list.anchors : [];
  const marks: Mark[] = anchors.map((a) => ({ id: a.id, reason: "repo-deleted", changed_paths: [], missing_paths: [], commits: 0, last_change: null }));
  if (marks.length) await call(config, "/memory/stale", deadline, { repo, marks });
  forgetRepo(config.home, repo);
  return { repo, root: null, anchors: anchors.length, marked: marks.length, cleared: 0, unchecked: 0, marks };
}

/**
 * `memsvc stale` and the session-start hook: the repository at `cwd`, then
 * every known repository whose folder no longer holds a repository.
 */
export async function checkStaleness(config: Config, cwd: string, deadline: number): Promise<RepoReport[]> {
  const reports: RepoReport[] = [];
  const here = repoInfo(cwd);
  if (here) {
    rememberRepo(config.home, here.repo, here.root);
    reports.push(await checkRepo(config, here, deadline));
  }
  for (const [repo, root] of Object.entries(knownRepos(config.home))) {
    if (Date.now() > deadline) break;
    if (here && repo === here.repo) continue;
    // Moved elsewhere or deleted: only a folder that is gone (not merely unreadable) counts.
    if (existsSync(root)) continue;
    reports.push(await markDeletedRepo(config, repo, deadline));
  }
  return reports;
}
