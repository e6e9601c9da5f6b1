import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoriesReply } from "../helpers/fake-llm";
import { distillHarness, TRANSCRIPT } from "../helpers/distill-server";
import { exportAll, importAll } from "../../src/core/memories";
import { memoryText } from "../../src/mcp/format";
import { dbRow, dbRows } from "../helpers/engine";
import { makeServices, TEST_TOKEN } from "../helpers/services";
import { planTranscript, segmentAnchors } from "../../src/capture/run";
import { normalizeRemote, repoInfo } from "../../src/capture/git";

const h = distillHarness();
let n = 0;
const distillAnchorsBody = (text: string, anchors: unknown, session = `sess-${++n}`) => ({
  text,
  session_id: session,
  segment_id: "seg",
  project: "shop",
  anchors,
});
const auth = { authorization: `Bearer ${TEST_TOKEN}` };
const getJson = async (path: string) => {
  const r = await fetch(`${h.srv.url}${path}`, { headers: auth });
  return { status: r.status, json: (await r.json()) as any };
};
const COMMIT = "0123456789abcdef0123456789abcdef01234567";
const ANCHORS = { repo: "github.com/acme/shop", branch: "main", commit: COMMIT, paths: ["src/db.ts", "./scripts/backfill.ts", "src\\orders.ts", "src/db.ts"] };

describe("anchors on /distill", () => {
  test("stored per memory, normalised, returned by GET /memory and shown by memsvc_get; deleting the memory deletes them", async () => {
    h.fake.script(memoriesReply("The orders table is migrated by scripts/backfill.ts with lock_timeout = 5s."));
    const r = await h.post(distillAnchorsBody(TRANSCRIPT, ANCHORS));
    expect(r.status).toBe(201);
    const { ids } = (await r.json()) as any;
    expect(ids.length).toBe(1);
    const got = await getJson(`/memory?id=${ids[0]}`);
    expect(got.status).toBe(200);
    expect(got.json.memory.anchors).toEqual([
      {
        repo: "github.com/acme/shop",
        branch: "main",
        commit: COMMIT,
        paths: ["src/db.ts", "scripts/backfill.ts", "src/orders.ts"],
        anchored_at: expect.any(String),
      },
    ]);
    const text = memoryText(got.json);
    expect(text).toContain(`- anchored to: github.com/acme/shop (main) at ${COMMIT.slice(0, 12)}: src/db.ts, scripts/backfill.ts, src/orders.ts`);
    const del = await fetch(`${h.srv.url}/memory?id=${ids[0]}`, { method: "DELETE", headers: auth });
    expect(del.status).toBe(200);
    expect(await h.count("memory_anchors")).toBe(0);
  });

  const bad: [string, unknown, RegExp][] = [
    ["an absolute path", { ...ANCHORS, paths: ["/etc/passwd"] }, /anchors\.paths\[0\] must be relative/],
    ["a .. segment", { ...ANCHORS, paths: ["src/../../x"] }, /anchors\.paths\[0\] must not contain "\.\."/],
    ["a drive letter", { ...ANCHORS, paths: ["C:\\x.ts"] }, /must be relative/],
    ["no paths", { ...ANCHORS, paths: [] }, /at least one path/],
    ["too many paths", { ...ANCHORS, paths: Array.from({ length: 201 }, (_, i) => `f${i}.ts`) }, /limit is 200/],
    ["a path too long", { ...ANCHORS, paths: ["a".repeat(501)] }, /longer than 500/],
    ["a commit that is no commit id", { ...ANCHORS, commit: "HEAD~1" }, /anchors\.commit must be a git commit id/],
    ["no repo", { ...ANCHORS, repo: "" }, /anchors\.repo is required/],
    ["credentials in the repo URL", { ...ANCHORS, repo: "https://bob:ghp_secret@github.com/acme/shop" }, /must not carry credentials/],
    ["an unknown field", { ...ANCHORS, content: "x" }, /unknown field content: /],
    ["not an object", ["src/db.ts"], /anchors must be an object/],
  ];
  for (const [name, anchors, message] of bad) {
    test(`400 for ${name}, nothing written, no model call`, async () => {
      const r = await h.post(distillAnchorsBody(TRANSCRIPT, anchors));
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).error.message).toMatch(message);
      expect(await h.count("memories")).toBe(0);
      expect(await h.count("memory_anchors")).toBe(0);
      expect(h.fake.requests.length).toBe(0);
    });
  }

  test("a distill merged into an anchored memory moves it to the new commit, keeps older paths and clears its mark", async () => {
    const text = "The orders table is migrated by scripts/backfill.ts with lock_timeout = 5s.";
    h.fake.script(memoriesReply(text));
    const first = (await (await h.post(distillAnchorsBody(TRANSCRIPT, ANCHORS, "s1"))).json()) as any;
    const mark = await fetch(`${h.srv.url}/memory/stale`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ repo: ANCHORS.repo, marks: [{ id: first.ids[0], reason: "changed", changed_paths: ["src/db.ts"], commits: 2 }] }),
    });
    expect(((await mark.json()) as any).marked).toBe(1);
    const shown = memoryText((await getJson(`/memory?id=${first.ids[0]}`)).json);
    expect(shown).toContain("- may be outdated: src/db.ts changed in 2 commits since");
    expect(shown).toContain("- changed files: src/db.ts");
    h.fake.script(memoriesReply(text));
    const next = "fedcba9876543210fedcba9876543210fedcba98";
    const second = (await (await h.post(distillAnchorsBody(TRANSCRIPT, { ...ANCHORS, commit: next, paths: ["src/new.ts"] }, "s2"))).json()) as any;
    expect(second.ids).toEqual(first.ids);
    const a = (await getJson(`/memory?id=${first.ids[0]}`)).json.memory.anchors;
    expect(a.length).toBe(1);
    expect(a[0].commit).toBe(next);
    expect(a[0].paths).toEqual(["src/new.ts", "src/db.ts", "scripts/backfill.ts", "src/orders.ts"]);
    expect(a[0].stale).toBeUndefined();
  });

  test("GET /anchors?repo= lists ids, commits and paths, never content; POST /memory/stale validates", async () => {
    h.fake.script(memoriesReply("The orders table is migrated by scripts/backfill.ts with lock_timeout = 5s."));
    const { ids } = (await (await h.post(distillAnchorsBody(TRANSCRIPT, ANCHORS))).json()) as any;
    const list = await getJson(`/anchors?repo=${encodeURIComponent(ANCHORS.repo)}`);
    expect(list.json).toEqual({
      repo: ANCHORS.repo,
      count: 1,
      anchors: [{ id: ids[0], commit: COMMIT, paths: ["src/db.ts", "scripts/backfill.ts", "src/orders.ts"], stale: false }],
    });
    expect(JSON.stringify(list.json)).not.toContain("lock_timeout");
    expect((await getJson("/anchors")).status).toBe(400);
    const post = (body: unknown) =>
      fetch(`${h.srv.url}/memory/stale`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(body) });
    for (const [body, msg] of [
      [{ repo: ANCHORS.repo, marks: [{ id: ids[0], reason: "gone" }] }, /reason must be one of/],
      [{ repo: ANCHORS.repo, marks: [{ id: ids[0], reason: "changed" }] }, /needs changed_paths/],
      [{ repo: ANCHORS.repo, marks: [{ id: ids[0], reason: "changed", changed_paths: ["../x"] }] }, /must not contain/],
      [{ repo: ANCHORS.repo, marks: [{ id: ids[0], reason: "changed", changed_paths: ["a"], commits: -1 }] }, /whole number/],
      [{ repo: ANCHORS.repo, marks: [{ id: ids[0], reason: "changed", changed_paths: ["a"], last_change: "soon" }] }, /ISO date/],
      [{ marks: [] }, /repo is required/],
      [{ repo: ANCHORS.repo, extra: 1 }, /unknown field/],
    ] as [unknown, RegExp][]) {
      const r = await post(body);
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).error.message).toMatch(msg);
    }
    expect((await h.sql<{ n: number }>("SELECT count(*) n FROM memory_anchors WHERE stale IS NOT NULL"))[0].n).toBe(0);
    const ok = await post({
      repo: ANCHORS.repo,
      marks: [
        { id: ids[0], reason: "missing", missing_paths: ["src/db.ts"] },
        { id: "no-such-memory", reason: "commit-unknown" },
      ],
    });
    expect(await ok.json()).toEqual({ repo: ANCHORS.repo, marked: 1, cleared: 0, unknown: 1 });
    const cleared = await post({ repo: ANCHORS.repo, fresh: [ids[0]] });
    expect(await cleared.json()).toEqual({ repo: ANCHORS.repo, marked: 0, cleared: 1, unknown: 0 });
  });

  test("export carries anchors and marks; import restores them; a hand-edited anchor line escaping the repository is refused", async () => {
    h.fake.script(memoriesReply("The orders table is migrated by scripts/backfill.ts with lock_timeout = 5s."));
    const { ids } = (await (await h.post(distillAnchorsBody(TRANSCRIPT, ANCHORS))).json()) as any;
    await fetch(`${h.srv.url}/memory/stale`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ repo: ANCHORS.repo, marks: [{ id: ids[0], reason: "changed", changed_paths: ["src/db.ts"], commits: 3 }] }),
    });
    const dir = mkdtempSync(join(tmpdir(), "memsvc-anchors-export-"));
    const file = join(dir, "out.jsonl");
    await exportAll(h.srv.services.storage, h.srv.services.config.paths.identity, file, { vectors: false });
    const fresh = makeServices();
    try {
      const r = await importAll(fresh, file);
      expect(r.memories).toBe(1);
      const rows = await dbRows<any>(fresh, "SELECT memory_id, repo, branch, commit_id, paths, stale FROM memory_anchors");
      expect(rows.length).toBe(1);
      expect(rows[0]).toMatchObject({ memory_id: ids[0], repo: ANCHORS.repo, branch: "main", commit_id: COMMIT });
      expect(JSON.parse(rows[0].stale)).toMatchObject({ reason: "changed", changed_paths: ["src/db.ts"], commits: 3 });
    } finally {
      await fresh.close();
    }
    const evil = join(dir, "evil.jsonl");
    writeFileSync(evil, readFileSync(file, "utf8").replace(/"paths":"\[[^\]]*\]"/, `"paths":"[\\"../../etc/passwd\\"]"`));
    const fresh2 = makeServices();
    try {
      await expect(importAll(fresh2, evil)).rejects.toThrow(/must not contain/);
      expect((await dbRow<{ n: number }>(fresh2, "SELECT count(*) n FROM memories"))!.n).toBe(0);
    } finally {
      await fresh2.close();
    }
  });
});

const hasGit = spawnSync("git", ["--version"]).status === 0;

describe("capture records the anchor of each segment", () => {
  test("normalizeRemote drops credentials and the .git suffix", () => {
    expect(normalizeRemote("git@github.com:acme/shop.git")).toBe("github.com/acme/shop");
    expect(normalizeRemote("https://bob:ghp_x@GitHub.com/acme/shop.git")).toBe("github.com/acme/shop");
    expect(normalizeRemote("ssh://git@host:2222/acme/shop")).toBe("host:2222/acme/shop");
    expect(normalizeRemote("/srv/git/shop.git")).toBe("shop");
  });

  test.skipIf(!hasGit)("Read/Edit/Write/MultiEdit/NotebookEdit paths inside the repository, relative to its root; Bash and outside paths ignored", () => {
    const root = mkdtempSync(join(tmpdir(), "memsvc-anchor-repo-"));
    const g = (...args: string[]) => {
      const r = spawnSync("git", ["-C", root, ...args], {
        encoding: "utf8",
        env: { ...process.env, GIT_AUTHOR_DATE: "2026-01-01T10:00:00Z", GIT_COMMITTER_DATE: "2026-01-01T10:00:00Z" },
      });
      if (r.status !== 0) throw new Error(r.stderr);
      return r.stdout.trim();
    };
    g("init", "-q", "-b", "main");
    g("config", "user.email", "t@example.com");
    g("config", "user.name", "t");
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src", "db.ts"), "x\n");
    g("add", ".");
    g("commit", "-qm", "one");
    const first = g("rev-parse", "HEAD");
    writeFileSync(join(root, "src", "db.ts"), "y\n");
    spawnSync("git", ["-C", root, "commit", "-qam", "two"], {
      env: { ...process.env, GIT_AUTHOR_DATE: "2026-02-01T10:00:00Z", GIT_COMMITTER_DATE: "2026-02-01T10:00:00Z" },
    });
    g("remote", "add", "origin", "https://bob:token@example.com/acme/shop.git");
    const sub = join(root, "src");
    const line = (content: unknown[], ts: string) =>
      JSON.stringify({ type: "assistant", sessionId: "s", cwd: sub, timestamp: ts, message: { role: "assistant", content } });
    const tool = (name: string, input: unknown) => ({ type: "tool_use", id: name, name, input });
    const transcript = join(root, "..", `t-${Date.now()}.jsonl`);
    writeFileSync(
      transcript,
      `${[
        JSON.stringify({
          type: "user",
          sessionId: "s",
          cwd: sub,
          timestamp: "2026-01-15T10:00:00Z",
          message: { role: "user", content: "Why does the orders migration lock the table for four minutes?" },
        }),
        line(
          [
            { type: "text", text: "Looking at the database module and the backfill script now." },
            tool("Read", { file_path: join(sub, "db.ts") }),
            tool("Edit", { file_path: "notes.md", old_string: "a", new_string: "b" }),
          ],
          "2026-01-15T10:01:00Z",
        ),
        line(
          [
            tool("Write", { file_path: join(root, "docs", "x.md"), content: "z" }),
            tool("MultiEdit", { file_path: join(sub, "db.ts"), edits: [] }),
            tool("NotebookEdit", { notebook_path: join(root, "nb.ipynb") }),
          ],
          "2026-01-15T10:02:00Z",
        ),
        line([tool("Bash", { command: "cat src/secret.ts" }), tool("Read", { file_path: "/etc/hosts" })], "2026-01-15T10:03:00Z"),
      ].join("\n")}\n`,
    );
    const plan = planTranscript(transcript, "claude", null);
    expect(plan.segments.length).toBe(1);
    const info = repoInfo(plan.cwd!);
    expect(info?.repo).toBe("example.com/acme/shop");
    const anchors = segmentAnchors(info, plan.cwd, plan.segments[0]);
    // The segment ended on 2026-01-15: HEAD was then the first commit, not today's HEAD.
    expect(anchors).toEqual({ repo: "example.com/acme/shop", branch: "main", commit: first, paths: ["src/db.ts", "src/notes.md", "docs/x.md", "nb.ipynb"] });
  });
});
