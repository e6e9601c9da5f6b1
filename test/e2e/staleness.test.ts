import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postJson, startServer, type TestServer } from "../helpers/server";
import { BUN, childEnv, ROOT, run, tempHome } from "../helpers/process";
import { TEST_TOKEN } from "../helpers/services";

/**
 * End to end on a real git repository made here: 50 memories anchored at
 * three different commits, then 20 commits that change, delete and restore
 * files. `memsvc stale` (a real process) must mark exactly the memories
 * whose files differ from their anchor's commit, with the right files and
 * commit counts; the expectation comes from a model of the file contents
 * kept by this test, not from git.
 */

const hasGit = spawnSync("git", ["--version"]).status === 0;
const FILES = 30;
const COMMITS = 20;
const MEMORIES = 50;
const WORDS = ["amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo", "jasper"];

let srv: TestServer;
let repo: string;
let home: string;
const auth = { authorization: `Bearer ${TEST_TOKEN}` };
const getJson = async (path: string) => (await (await fetch(`${srv.url}${path}`, { headers: auth })).json()) as any;

function git(...args: string[]): string {
  const r = spawnSync("git", ["-C", repo, ...args], {
    encoding: "utf8",
    env: { ...process.env, GIT_AUTHOR_DATE: dateOf(step), GIT_COMMITTER_DATE: dateOf(step) },
  });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}
let step = 0;
const dateOf = (k: number) => new Date(Date.UTC(2026, 0, 1 + k, 12)).toISOString();

/** snapshots[k]: path -> content after commit k (0 = the initial commit); null = deleted. */
const snapshots: Map<string, string | null>[] = [];
/** touched[k]: the paths commit k changed. */
const touched: Set<string>[] = [new Set()];
const shas: string[] = [];
const src = (i: number) => `src/f${i}.ts`;
const doc = (i: number) => `docs/d${i}.md`;

interface Planned {
  i: number;
  at: number;
  paths: string[];
  content: string;
  id?: string;
}
const planned: Planned[] = [];

function commitChanges(k: number, changes: [string, string | null][]) {
  step = k;
  const next = new Map(snapshots[k - 1]);
  const paths = new Set<string>();
  for (const [p, content] of changes) {
    if (content === null) rmSync(join(repo, p));
    else writeFileSync(join(repo, p), content);
    next.set(p, content);
    paths.add(p);
  }
  git("add", "-A");
  git("commit", "-qm", `change ${k}`);
  snapshots.push(next);
  touched.push(paths);
  shas.push(git("rev-parse", "HEAD"));
}

/** What the test expects for memory m: null (fresh) or the changed/missing paths and commit count. */
function expected(m: Planned) {
  const last = snapshots[COMMITS];
  const changed = m.paths.filter((p) => snapshots[m.at].get(p) !== last.get(p));
  const missing = m.paths.filter((p) => last.get(p) == null);
  if (changed.length === 0 && missing.length === 0) return null;
  let commits = 0;
  let lastChange: string | null = null;
  for (let k = m.at + 1; k <= COMMITS; k++) {
    if (changed.some((p) => touched[k].has(p))) {
      commits++;
      lastChange = dateOf(k);
    }
  }
  return { reason: missing.length ? "missing" : "changed", changed_paths: changed, missing_paths: missing, commits, last_change: lastChange };
}

beforeAll(async () => {
  if (!hasGit) return;
  srv = await startServer();
  repo = mkdtempSync(join(tmpdir(), "memsvc-stale-repo-"));
  home = tempHome();
  git("init", "-q", "-b", "main");
  git("config", "user.email", "t@example.com");
  git("config", "user.name", "t");
  git("remote", "add", "origin", "git@example.com:acme/shop.git");
  mkdirSync(join(repo, "src"));
  mkdirSync(join(repo, "docs"));
  const first = new Map<string, string | null>();
  for (let i = 0; i < FILES; i++) first.set(src(i), `export const f${i} = ${i};\n`);
  for (let i = 0; i < 3; i++) first.set(doc(i), `# doc ${i}\n`);
  for (const [p, c] of first) writeFileSync(join(repo, p), c!);
  git("add", "-A");
  git("commit", "-qm", "initial");
  snapshots.push(first);
  shas.push(git("rev-parse", "HEAD"));
  for (let k = 1; k <= COMMITS; k++) {
    // Memories are anchored at commits 0, 6 and 12: made before the later commits exist, as in life.
    if (k === 7 || k === 13) await anchorMemories(k - 1);
    if (k === 13) commitChanges(k, [[src(29), null]]);
    else if (k === 17)
      commitChanges(k, [[src(7), snapshots[0].get(src(7))!]]); // changed by commit 1, restored
    else {
      const p = src((k * 7) % FILES);
      const changes: [string, string | null][] = [[p, `${snapshots[k - 1].get(p)}// change ${k}\n`]];
      if (k % 5 === 0) changes.push([doc(k % 3), `${snapshots[k - 1].get(doc(k % 3))}change ${k}\n`]);
      commitChanges(k, changes);
    }
  }
});

async function anchorMemories(at: number) {
  for (let i = 0; i < MEMORIES; i++) {
    const anchorAt = i % 3 === 0 ? 0 : i % 3 === 1 ? 6 : 12;
    if ((at === 6 && anchorAt !== 0 && anchorAt !== 6) || (at === 12 && anchorAt !== 12)) continue;
    const paths = [src(i % FILES)];
    if (i % 4 === 0) paths.push(doc(i % 3));
    if (i % 10 === 9) paths.push(src(7));
    const content = `Memory ${i}: the ${WORDS[i % 10]}${WORDS[Math.floor(i / 10)]} handler lives in ${paths[0]} and keeps its counters per tenant.`;
    const m: Planned = { i, at: anchorAt, paths, content };
    const r = await postJson(
      `${srv.url}/ingest`,
      { content, project: "shop", anchors: { repo: "example.com/acme/shop", branch: "main", commit: shas[anchorAt], paths } },
      auth,
    );
    expect(r.status).toBe(201);
    m.id = ((await r.json()) as any).id;
    planned.push(m);
  }
}

afterAll(async () => {
  if (srv) await srv.stop();
});

const stale = (dir: string) => run([BUN, join(ROOT, "src", "main.ts"), "stale", "--json"], childEnv(home, { MEMSVC_URL: srv.url }), dir);

describe.skipIf(!hasGit)("staleness on a real repository", () => {
  test("50 anchored memories, 20 commits: exactly the memories whose files changed are marked, with their files and commit counts", async () => {
    expect(planned.length).toBe(MEMORIES);
    // One more memory, anchored at a commit this repository never had (a rewritten history).
    const orphan = await postJson(
      `${srv.url}/ingest`,
      {
        content: "The orphan handler was tuned on a branch that was force-pushed away.",
        anchors: { repo: "example.com/acme/shop", commit: "d".repeat(40), paths: [src(0)] },
      },
      auth,
    );
    const orphanId = ((await orphan.json()) as any).id;

    const r = await stale(join(repo, "src"));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout).reports;
    expect(report.length).toBe(1);
    expect(report[0]).toMatchObject({ repo: "example.com/acme/shop", anchors: MEMORIES + 1, unchecked: 0 });

    const want = new Map(planned.map((m) => [m.id!, expected(m)] as const));
    const wantMarked = new Set([...want].filter(([, e]) => e !== null).map(([id]) => id));
    // The scenario is not degenerate: both sets are substantial.
    expect(wantMarked.size).toBeGreaterThan(10);
    expect(MEMORIES - wantMarked.size).toBeGreaterThan(10);
    const listed = (await getJson(`/anchors?repo=${encodeURIComponent("example.com/acme/shop")}`)).anchors as { id: string; stale: boolean }[];
    const marked = new Set(listed.filter((a) => a.stale).map((a) => a.id));
    expect([...marked].sort()).toEqual([...wantMarked, orphanId].sort());

    for (const m of planned) {
      const e = want.get(m.id!);
      const got = (await getJson(`/memory?id=${m.id}`)).memory.anchors[0].stale;
      if (e === null) expect(got).toBeUndefined();
      else expect({ i: m.i, ...got }).toMatchObject({ i: m.i, ...e, head: shas[COMMITS] });
    }
    expect((await getJson(`/memory?id=${orphanId}`)).memory.anchors[0].stale.reason).toBe("commit-unknown");
    // The restored file: anchored before its change (commit 0), it is as it was, so not stale.
    const restoredAt0 = planned.find((m) => m.at === 0 && m.paths.includes(src(7)) && m.paths.length === 2 && expected(m) === null);
    const restoredAt6 = planned.find((m) => m.at === 6 && m.paths.includes(src(7)));
    if (restoredAt6) expect(expected(restoredAt6)?.changed_paths).toContain(src(7));
    expect(restoredAt0 ?? restoredAt6).toBeDefined();
  });

  test("search and recall show the mark, after the gist on the same line", async () => {
    const m = planned.find((p) => expected(p)?.reason === "changed")!;
    const words = m.content.split(" ")[3];
    const s = await getJson(`/search?query=${encodeURIComponent(`${words} handler counters per tenant`)}&limit=50`);
    const hit = s.results.find((h: any) => h.id === m.id);
    expect(hit.stale).toMatchObject({ reason: "changed", changed_paths: expected(m)!.changed_paths });
    const fresh = s.results.find((h: any) => h.id !== m.id && !h.stale);
    expect(fresh).toBeDefined();
    const rec = await postJson(
      `${srv.url}/recall-index`,
      { session_id: "stale-e2e", prompt: `Where does the ${words} handler keep its counters per tenant?`, project: "shop" },
      auth,
    );
    const block = ((await rec.json()) as any).block as string | null;
    expect(block).not.toBeNull();
    const line = block!.split("\n").find((l) => l.includes(m.id!.slice(0, 8)));
    expect(line).toBeDefined();
    const e = expected(m)!;
    expect(line!.split("(may be outdated")[0]).toContain(words);
    expect(line).toContain(
      `(may be outdated: ${e.changed_paths.slice(0, 2).join(", ")}${e.changed_paths.length > 2 ? ` and ${e.changed_paths.length - 2} more` : ""} changed in ${e.commits} commit${e.commits === 1 ? "" : "s"} since)`,
    );
  });

  test("a stale memory ranks below an equally relevant fresh one (STALE_RANK_FACTOR)", async () => {
    const content = "The quillfeather cache evicts its entries after nine minutes of silence.";
    const anchors = { repo: "example.com/acme/other", commit: "a".repeat(40), paths: ["src/cache.ts"] };
    const ids: string[] = [];
    for (let k = 0; k < 2; k++) ids.push(((await (await postJson(`${srv.url}/ingest`, { content, anchors }, auth)).json()) as any).id);
    const before = (await getJson(`/search?query=quillfeather%20cache`)).results.map((h: any) => h.id);
    // Mark whichever ranks first: it must then rank second.
    const top = before[0];
    const res = await postJson(
      `${srv.url}/memory/stale`,
      { repo: anchors.repo, marks: [{ id: top, reason: "changed", changed_paths: ["src/cache.ts"], commits: 1 }] },
      auth,
    );
    expect(((await res.json()) as any).marked).toBe(1);
    const after = (await getJson(`/search?query=quillfeather%20cache`)).results;
    expect(after.map((h: any) => h.id)).toEqual([...before].reverse());
    expect(after[1].stale.changed_paths).toEqual(["src/cache.ts"]);
    expect(after[0].stale).toBeUndefined();
    expect(after[1].score).toBeLessThan(after[0].score);
  });

  test("memsvc hook session-start runs the check for the session's folder within its budget", async () => {
    const r2 = mkdtempSync(join(tmpdir(), "memsvc-stale-hooked-"));
    const g = (...args: string[]) => spawnSync("git", ["-C", r2, ...args], { encoding: "utf8" }).stdout.trim();
    g("init", "-q");
    g("config", "user.email", "t@example.com");
    g("config", "user.name", "t");
    writeFileSync(join(r2, "a.ts"), "one\n");
    g("add", "-A");
    g("commit", "-qm", "one");
    const anchored = g("rev-parse", "HEAD");
    writeFileSync(join(r2, "a.ts"), "two\n");
    g("commit", "-qam", "two");
    const repoName = r2.split("/").pop()!;
    const id = (
      (await (
        await postJson(
          `${srv.url}/ingest`,
          { content: "The hooked module reads a.ts at start.", anchors: { repo: repoName, commit: anchored, paths: ["a.ts"] } },
          auth,
        )
      ).json()) as any
    ).id;
    const hookHome = tempHome();
    const p = Bun.spawn([BUN, join(ROOT, "src", "main.ts"), "hook", "session-start"], {
      cwd: ROOT,
      env: childEnv(hookHome, { MEMSVC_URL: srv.url, HOME: hookHome }),
      stdin: new Blob([JSON.stringify({ session_id: "h1", cwd: r2, hook_event_name: "SessionStart" })]),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await p.exited).toBe(0);
    const got = (await getJson(`/memory?id=${id}`)).memory.anchors[0].stale;
    expect(got).toMatchObject({ reason: "changed", changed_paths: ["a.ts"], commits: 1 });
  });

  test("a file restored to its anchored content clears the mark; a deleted repository marks all its memories", async () => {
    // Restore every changed src file to its initial content: memories anchored at commit 0 on src files only become fresh.
    step = COMMITS + 1;
    for (let i = 0; i < FILES; i++) writeFileSync(join(repo, src(i)), snapshots[0].get(src(i))!);
    git("add", "-A");
    git("commit", "-qm", "restore");
    const r = await stale(repo);
    expect(r.code).toBe(0);
    const cleared = JSON.parse(r.stdout).reports[0].cleared;
    const list = (await getJson(`/anchors?repo=${encodeURIComponent("example.com/acme/shop")}`)).anchors as { id: string; stale: boolean }[];
    const byId = new Map(list.map((a) => [a.id, a.stale]));
    const restoredOnes = planned.filter((m) => m.at === 0 && m.paths.every((p) => p.startsWith("src/")) && expected(m) !== null);
    expect(restoredOnes.length).toBeGreaterThan(0);
    for (const m of restoredOnes) expect(byId.get(m.id!)).toBe(false);
    expect(cleared).toBeGreaterThanOrEqual(restoredOnes.length);

    // The repository goes away; `memsvc stale` run in another repository notices (capture and stale remember where it was).
    const gone = `${repo}-deleted`;
    renameSync(repo, gone);
    rmSync(gone, { recursive: true, force: true });
    const other = mkdtempSync(join(tmpdir(), "memsvc-stale-other-"));
    spawnSync("git", ["-C", other, "init", "-q"]);
    const r2 = await stale(other);
    expect(r2.code).toBe(0);
    const reports = JSON.parse(r2.stdout).reports;
    expect(reports.find((x: any) => x.repo === "example.com/acme/shop")).toMatchObject({ root: null, marked: MEMORIES + 1 });
    for (const m of planned) expect((await getJson(`/memory?id=${m.id}`)).memory.anchors[0].stale.reason).toBe("repo-deleted");
    // Outside any repository: exit 1 with a clear message.
    const nowhere = mkdtempSync(join(tmpdir(), "memsvc-stale-none-"));
    const r3 = await stale(nowhere);
    expect(r3.code).toBe(1);
    expect(r3.stderr).toContain("is not inside a git repository");
  });
});
