import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { NewMemoryRow, StaleMark } from "../../../../src/core/memories";
import type { Storage } from "../../../../src/core/storage";
import { withStorage } from "../../../../src/core/storage";
import { dbRows } from "../../../helpers/engine";
import { sharedPgUrl } from "../../../helpers/pg-server";
import { makeServices, type TestServices } from "../../../helpers/services";

// The MemoriesStore contract, the same assertions on both engines in every
// run: SQLite (a temp file) and PostgreSQL (PGlite over TCP, a schema of its
// own; the postgres suite's database, else one started here).
const engines: [string, () => Promise<TestServices>][] = [
  ["sqlite", async () => makeServices({ config: { storage: "sqlite" } })],
  [
    "postgres",
    async () =>
      makeServices({
        config: {
          storage: "postgres",
          database_url: await sharedPgUrl(),
          database_schema: `mem_store_${process.pid}_${Math.random().toString(36).slice(2, 8)}`,
        },
      }),
  ],
];

const vec = (i: number) => {
  const v = new Float32Array(384);
  v[i % 384] = 1;
  return v;
};
const ID = ["aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaab-0000-4000-8000-000000000002", "bbbbbbbb-0000-4000-8000-000000000003"];
const row = (id: string, i: number): NewMemoryRow => ({
  id,
  content: `memory ${i}: the billing worker retries webhooks`,
  memoryType: "knowledge",
  project: i === 2 ? null : "billing",
  sourceAgent: "box",
  sourceAgentId: null,
  sourceDomain: null,
  sourceSession: i === 2 ? null : "sess-1",
  privacy: "WORK",
  createdAt: 1_000 + i,
  updatedAt: 2_000,
  refreshedAt: 2_000,
  strength: 1,
  vector: vec(i),
  tags: [
    { tag: "billing", weight: 1 },
    { tag: `t${i}`, weight: 0.7 },
  ],
});
const mark = (paths: string[]): StaleMark => ({
  reason: "changed",
  changed_paths: paths,
  missing_paths: [],
  commits: 2,
  last_change: null,
  head: null,
  checked_at: "2026-01-01T00:00:00.000Z",
});

for (const [engine, open] of engines) {
  describe(`MemoriesStore on ${engine}`, () => {
    let s: TestServices;
    let st: Storage;
    let seqs: number[] = [];
    beforeAll(async () => {
      s = await open();
      st = s.storage;
      await st.ready();
    }, 180_000);
    afterAll(async () => {
      await s?.close();
    });

    test("insert: rows, vectors and tags in one call; read back by id, prefix, seq and session", async () => {
      seqs = await st.memories.insertMemories(ID.map(row));
      expect(seqs).toHaveLength(3);
      expect(new Set(seqs).size).toBe(3);
      // Rows carry created_by too, which MemoryRow does not declare (it is read back, never needed by core).
      const r = (await st.memories.memoryById(ID[0])) as Record<string, unknown> | null;
      expect(r).toEqual({
        seq: seqs[0],
        id: ID[0],
        content: "memory 0: the billing worker retries webhooks",
        memoryType: "knowledge",
        project: "billing",
        sourceAgent: "box",
        sourceAgentId: null,
        sourceDomain: null,
        sourceSession: "sess-1",
        privacy: "WORK",
        createdAt: 1_000,
        updatedAt: 2_000,
        refreshedAt: 2_000,
        strength: 1,
        shownCount: 0,
        usedCount: 0,
        lastShownAt: null,
        lastUsedAt: null,
        linkCount: 0,
        // The member whose token created it (issue 36): none for a row inserted without one.
        createdBy: null,
      });
      expect(await st.memories.memoryById("ffffffff-0000-4000-8000-000000000000")).toBeNull();
      expect((await st.memories.memoriesByIdPrefix("aaaaaaa", 11)).map((m) => m.id).sort()).toEqual([ID[0], ID[1]]);
      expect((await st.memories.memoriesByIdPrefix("aaaaaaab", 11)).map((m) => m.id)).toEqual([ID[1]]);
      expect((await st.memories.memoriesBySeq([seqs[2], seqs[0], 999_999])).map((m) => m.id).sort()).toEqual([ID[0], ID[2]]);
      expect(await st.memories.countSession("sess-1")).toBe(2);
      expect(await st.transaction((tx) => tx.memories.claimSession("sess-1"))).toBe(2);
      expect((await st.memories.tagsOf(ID)).filter((t) => t.memoryId === ID[1])).toEqual([
        { memoryId: ID[1], tag: "billing", weight: 1 },
        { memoryId: ID[1], tag: "t1", weight: 0.7 },
      ]);
    });

    test("a use counts, moves the decay clock, sets the strength and records an event; a change returns the new row", async () => {
      const used = await st.memories.markUsed(ID[0], 5_000, 1.25);
      expect(used).toMatchObject({ usedCount: 1, lastUsedAt: 5_000, refreshedAt: 5_000, strength: 1.25 });
      expect(await st.memories.markUsed("ffffffff-0000-4000-8000-000000000000", 5_000, 1)).toBeNull();
      const changed = await st.memories.updateMemory(ID[0], { content: "memory 0: webhooks retry with backoff", project: null, updatedAt: 6_000 });
      expect(changed).toMatchObject({ content: "memory 0: webhooks retry with backoff", project: null, updatedAt: 6_000, usedCount: 1 });
      expect(await st.memories.snapshot(ID[0])).toEqual({ content: "memory 0: webhooks retry with backoff", memoryType: "knowledge", project: null });
      await st.memories.setVector(seqs[0], vec(9));
      await st.memories.writeTags(ID[0], [{ tag: "webhooks", weight: 1 }]);
      expect(await st.memories.tagsOf([ID[0]])).toEqual([{ memoryId: ID[0], tag: "webhooks", weight: 1 }]);
    });

    test("versions: numbered per memory, oldest dropped beyond the bound, one by number", async () => {
      for (let i = 0; i < 4; i++) {
        const n = await st.memories.addVersion(
          ID[1],
          { content: `v${i}`, memoryType: "knowledge", project: "billing", reason: "update", sourceId: i === 3 ? ID[2] : null, replacedAt: 100 + i },
          3,
        );
        expect(n).toBe(i + 1);
      }
      const all = await st.memories.versions(ID[1]);
      expect(all.map((v) => [v.version, v.content])).toEqual([
        [2, "v1"],
        [3, "v2"],
        [4, "v3"],
      ]);
      expect(await st.memories.version(ID[1], 4)).toEqual({
        version: 4,
        content: "v3",
        memoryType: "knowledge",
        project: "billing",
        reason: "update",
        sourceId: ID[2],
        replacedAt: 103,
      });
      expect(await st.memories.version(ID[1], 1)).toBeNull();
      await st.memories.deleteVersions(ID[1]);
      expect(await st.memories.versions(ID[1])).toEqual([]);
    });

    test("anchors: upsert replaces per memory and repository, marks stale and clears, counts unknown ids", async () => {
      await st.memories.upsertAnchors([
        { memoryId: ID[0], repo: "git@example.com:shop", branch: "main", commit: "abcdef1", paths: ["src/a.ts"], anchoredAt: 10 },
        { memoryId: ID[1], repo: "git@example.com:shop", branch: null, commit: "abcdef1", paths: ["src/b.ts"], anchoredAt: 11 },
      ]);
      expect(
        await st.memories.markStale(
          "git@example.com:shop",
          [
            { id: ID[0], mark: mark(["src/a.ts"]) },
            { id: ID[2], mark: mark(["x"]) },
          ],
          [],
          20,
        ),
      ).toEqual({ marked: 1, cleared: 0, unknown: 1 });
      expect(await st.memories.staleMarks(ID)).toEqual([{ memoryId: ID[0], stale: mark(["src/a.ts"]) }]);
      // A new anchor of the same memory in the same repository replaces the old one and clears its mark.
      await st.memories.upsertAnchors([
        { memoryId: ID[0], repo: "git@example.com:shop", branch: "dev", commit: "abcdef2", paths: ["src/c.ts", "src/a.ts"], anchoredAt: 30 },
      ]);
      expect(await st.memories.anchorPaths([ID[0], ID[2]], "git@example.com:shop")).toEqual(new Map([[ID[0], ["src/c.ts", "src/a.ts"]]]));
      expect(await st.memories.anchorsOf([ID[0]])).toEqual([
        {
          memoryId: ID[0],
          repo: "git@example.com:shop",
          branch: "dev",
          commit: "abcdef2",
          paths: ["src/c.ts", "src/a.ts"],
          anchoredAt: 30,
          stale: null,
          confirmedAt: null,
        },
      ]);
      expect((await st.memories.repoAnchors("git@example.com:shop")).map((a) => a.memoryId)).toEqual([ID[1], ID[0]]);
      expect(await st.memories.markStale("git@example.com:shop", [{ id: ID[1], mark: mark(["src/b.ts"]) }], [], 40)).toEqual({
        marked: 1,
        cleared: 0,
        unknown: 0,
      });
      expect(await st.memories.markStale("git@example.com:shop", [], [ID[1], ID[1], ID[0], ID[2]], 50)).toEqual({ marked: 0, cleared: 1, unknown: 1 });
      expect(await st.memories.staleMarks(ID)).toEqual([]);
    });

    test("re-check state: evidence kept on re-anchoring unless replaced, settles apply only to the mark they saw", async () => {
      const repo = "git@example.com:evidence";
      await st.memories.upsertAnchors([
        {
          memoryId: ID[0],
          repo,
          branch: "main",
          commit: "abcdef1",
          paths: ["src/a.ts", "src/b.ts"],
          anchoredAt: 10,
          evidence: "user: the retry lives in src/a.ts",
        },
        { memoryId: ID[1], repo, branch: null, commit: "abcdef1", paths: ["src/b.ts"], anchoredAt: 11 },
      ]);
      expect(await st.memories.evidenceOf(ID[0])).toEqual([{ repo, evidence: "user: the retry lives in src/a.ts" }]);
      expect(await st.memories.evidenceOf(ID[1])).toEqual([]);
      // Re-anchored without evidence (an /ingest): the excerpt stays.
      await st.memories.upsertAnchors([{ memoryId: ID[0], repo, branch: "main", commit: "abcdef2", paths: ["src/a.ts", "src/b.ts"], anchoredAt: 12 }]);
      expect(await st.memories.evidenceOf(ID[0])).toEqual([{ repo, evidence: "user: the retry lives in src/a.ts" }]);
      const m1 = { ...mark(["src/a.ts"]), head: "abcdef9" };
      await st.memories.markStale(
        repo,
        [
          { id: ID[0], mark: m1 },
          { id: ID[1], mark: mark(["src/b.ts"]) },
        ],
        [],
        20,
      );
      const listed = (await st.memories.staleAnchors(100)).filter((r) => r.repo === repo);
      expect(listed.map((r) => [r.memoryId, r.evidence, r.rechecked])).toEqual([
        [ID[0], "user: the retry lives in src/a.ts", null],
        [ID[1], null, null],
      ]);
      const text0 = listed[0].staleText;
      expect(JSON.parse(text0)).toEqual(m1);
      // A settle against a mark the anchor no longer holds changes nothing.
      expect(await st.memories.settleAnchor(ID[0], repo, "{}", { kind: "checked", rechecked: "x" })).toBe(false);
      expect(await st.memories.settleAnchor(ID[0], repo, text0, { kind: "checked", rechecked: "sig-1" })).toBe(true);
      expect((await st.memories.staleAnchors(100)).find((r) => r.memoryId === ID[0] && r.repo === repo)?.rechecked).toBe("sig-1");
      expect(await st.memories.settleAnchor(ID[0], repo, text0, { kind: "confirmed", anchor: { commit: "abcdef9", paths: ["src/a.ts"], at: 30 } })).toBe(true);
      const [a0] = (await st.memories.anchorsOf([ID[0]])).filter((r) => r.repo === repo);
      expect(a0).toMatchObject({ commit: "abcdef9", paths: ["src/a.ts"], stale: null, confirmedAt: 30 });
      expect(await st.memories.settleAnchor(ID[1], repo, listed[1].staleText, { kind: "delete" })).toBe(true);
      expect((await st.memories.anchorsOf([ID[1]])).filter((r) => r.repo === repo)).toEqual([]);
      // A new anchoring replaces the excerpt and forgets the confirmation.
      await st.memories.upsertAnchors([
        { memoryId: ID[0], repo, branch: "main", commit: "abcdef3", paths: ["src/a.ts"], anchoredAt: 40, evidence: "assistant: moved to src/c.ts" },
      ]);
      expect(await st.memories.evidenceOf(ID[0])).toEqual([{ repo, evidence: "assistant: moved to src/c.ts" }]);
      expect((await st.memories.anchorsOf([ID[0]])).find((r) => r.repo === repo)?.confirmedAt).toBeNull();
    });

    test("a transaction's writes land together or not at all; a delete takes links, tags, anchors and versions along", async () => {
      const extra = "cccccccc-0000-4000-8000-000000000004";
      await expect(
        st.transaction(async (tx) => {
          await tx.memories.insertMemories([row(extra, 3)]);
          await tx.memories.addVersion(ID[0], { content: "lost", memoryType: "knowledge", project: null, reason: "update", sourceId: null, replacedAt: 1 }, 50);
          throw new Error("boom");
        }),
      ).rejects.toThrow("boom");
      expect(await st.memories.memoryById(extra)).toBeNull();
      expect(await st.memories.versions(ID[0])).toEqual([]);
      await st.transaction(async (tx) => {
        await tx.memories.addVersion(ID[0], { content: "kept", memoryType: "knowledge", project: null, reason: "update", sourceId: null, replacedAt: 1 }, 50);
        // A core function handed withStorage(s, tx) joins the transaction.
        expect(withStorage(s, tx).storage).toBe(tx);
      });
      expect((await st.memories.versions(ID[0])).map((v) => v.content)).toEqual(["kept"]);
      const link = "INSERT INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, ?, ?, 1)";
      await dbRows(s, link, [ID[0], ID[1], "depends_on", 0.9]);
      await dbRows(s, link, [ID[2], ID[0], "mentions", 0.5]);
      expect(await st.memories.linksOf(ID[0], 9, 10)).toEqual([
        { id: ID[1], head: "memory 1:", length: 45, memoryType: "knowledge", relationship: "depends_on", weight: 0.9, direction: "out" },
        { id: ID[2], head: "memory 2:", length: 45, memoryType: "knowledge", relationship: "mentions", weight: 0.5, direction: "in" },
      ]);
      expect(await st.memories.linksOf(ID[0], 9, 1)).toHaveLength(1);
      expect(await st.memories.deleteMemories([ID[0]])).toBe(2);
      expect(await dbRows(s, "SELECT from_id FROM links")).toEqual([]);
      expect((await st.memories.memoryById(ID[1]))!.linkCount).toBe(0);
      expect(await st.memories.memoryById(ID[0])).toBeNull();
      expect(await st.memories.tagsOf([ID[0]])).toEqual([]);
      expect(await st.memories.anchorsOf([ID[0]])).toEqual([]);
      expect(await st.memories.versions(ID[0])).toEqual([]);
      expect(await st.memories.countSession("sess-1")).toBe(1);
    });
  });
}
