import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MEMORY_TYPES } from "../../../../src/core/memories";
import { dbRows } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

// AnalyticsStore on whichever engine the run uses (MEMSVC_TEST_ENGINE), over
// rows written with plain SQL both engines speak; every expected figure is
// worked out by hand from the rows below.
const DAY = 86_400_000;
const D0 = 20_000 * DAY; // the window's first day
const window = { start: D0, days: 3 };

let s: TestServices;
beforeAll(async () => {
  s = makeServices();
  const memory = (id: string, type: string, project: string | null, createdAt: number, shown: number, used: number) =>
    dbRows(
      s,
      "INSERT INTO memories(id, content, memory_type, project, source_agent, created_at, updated_at, refreshed_at, strength, shown_count, used_count) VALUES (?, ?, ?, ?, 'test', ?, ?, ?, 1, ?, ?)",
      [id, `content of ${id}`, type, project, createdAt, createdAt, createdAt, shown, used],
    );
  await memory("m1", "knowledge", "p", D0 - 1, 0, 0); // the last ms before the window
  await memory("m2", "learnings", "p", D0 + 10, 2, 1);
  await memory("m3", "knowledge", "q", D0 + DAY + 5, 1, 0);
  await memory("m4", "notes", null, D0 + 2 * DAY + 1, 0, 0); // a type of no current name
  await memory("m5", "decisions", null, D0 + 3 * DAY, 1, 0); // the first ms after the window
  const tag = (id: string, t: string, w: number) => dbRows(s, "INSERT INTO memory_tags(memory_id, tag, weight) VALUES (?, ?, ?)", [id, t, w]);
  await tag("m1", "alpha", 1);
  await tag("m2", "alpha", 0.5);
  await tag("m2", "beta", 0.9); // m2's primary domain: the heavier tag
  await tag("m4", "gamma", 1);
  await dbRows(s, "INSERT INTO links(from_id, to_id, relationship, weight, created_at) VALUES ('m1', 'm2', 'related', 0.7, 1)");
  await dbRows(s, "INSERT INTO links(from_id, to_id, relationship, weight, created_at) VALUES ('m2', 'm3', 'related', 0.6, 1)"); // across projects p and q
  const event = (id: string, kind: string, at: number) => dbRows(s, "INSERT INTO memory_events(memory_id, kind, at) VALUES (?, ?, ?)", [id, kind, at]);
  await event("m1", "shown", D0 - 5); // before the window: in the totals, not the days
  await event("m2", "shown", D0 + 100);
  await event("m2", "shown", D0 + 200);
  await event("m2", "used", D0 + 300);
  await event("m3", "shown", D0 + DAY + 10);
  await event("gone", "shown", D0 + 3 * DAY + 1); // after the window (and of a deleted memory)
});
afterAll(async () => {
  await s.close();
});

describe("dashboard figures", () => {
  test("counts, growth, primary domains and recall adoption in one read", async () => {
    const f = await s.storage.analytics.dashboardFigures(window, MEMORY_TYPES);
    expect(f.counts).toEqual({ memories: 5, learnings: 1, links: 2, domains: 3 });
    expect(f.growthBase).toBe(1);
    expect(f.types).toEqual([...MEMORY_TYPES, "notes"]);
    // Engines may leave out empty cells: compare those with memories.
    const cells = f.growthPerDay.filter((c) => c.n > 0).sort((a, b) => a.i - b.i || a.type.localeCompare(b.type));
    expect(cells).toEqual([
      { i: 0, type: "learnings", n: 1 },
      { i: 1, type: "knowledge", n: 1 },
      { i: 2, type: "notes", n: 1 },
    ]);
    expect(f.growthPerDay.every((c) => c.i >= 0 && c.i < window.days && f.types.includes(c.type))).toBe(true);
    expect([...f.primaryDomains].sort((a, b) => a.domain.localeCompare(b.domain))).toEqual([
      { domain: "alpha", n: 1 },
      { domain: "beta", n: 1 },
      { domain: "gamma", n: 1 },
    ]);
    expect(f.recall).toEqual({ shown: 5, used: 1, memories: 5, neverShown: 2, neverUsed: 4 });
    expect(f.recallPerDay).toEqual([
      { i: 0, shown: 2, used: 1 },
      { i: 1, shown: 1, used: 0 },
      { i: 2, shown: 0, used: 0 },
    ]);
  });
});

describe("dashboard figures within a scope", () => {
  test("every figure of the scope's memories and their events only; unscoped, every project's", async () => {
    const a = s.storage.analytics;
    const p = await a.dashboardFigures(window, MEMORY_TYPES, ["p"]);
    // m1 and m2; the link m1-m2 (m2-m3 leads to q); tags alpha, beta; m4's type "notes" is not p's.
    expect(p.counts).toEqual({ memories: 2, learnings: 1, links: 1, domains: 2 });
    expect(p.growthBase).toBe(1);
    expect(p.types).toEqual([...MEMORY_TYPES]);
    expect(p.growthPerDay.filter((c) => c.n > 0)).toEqual([{ i: 0, type: "learnings", n: 1 }]);
    expect([...p.primaryDomains].sort((x, y) => x.domain.localeCompare(y.domain))).toEqual([
      { domain: "alpha", n: 1 },
      { domain: "beta", n: 1 },
    ]);
    expect(p.recall).toEqual({ shown: 3, used: 1, memories: 2, neverShown: 1, neverUsed: 1 });
    expect(p.recallPerDay).toEqual([
      { i: 0, shown: 2, used: 1 },
      { i: 1, shown: 0, used: 0 },
      { i: 2, shown: 0, used: 0 },
    ]);
    const q = await a.dashboardFigures(window, MEMORY_TYPES, ["q"]);
    expect(q.counts).toEqual({ memories: 1, learnings: 0, links: 0, domains: 0 });
    expect(q.growthPerDay.filter((c) => c.n > 0)).toEqual([{ i: 1, type: "knowledge", n: 1 }]);
    expect(q.primaryDomains).toEqual([]);
    expect(q.recall).toEqual({ shown: 1, used: 0, memories: 1, neverShown: 0, neverUsed: 1 });
    expect(q.recallPerDay.map((d) => d.shown)).toEqual([0, 1, 0]);
    // Two projects together; a project nobody has is all zeros; no scope is every project (as above).
    expect((await a.dashboardFigures(window, MEMORY_TYPES, ["p", "q"])).counts).toEqual({ memories: 3, learnings: 1, links: 2, domains: 2 });
    const none = await a.dashboardFigures(window, MEMORY_TYPES, ["nobody"]);
    expect(none.counts).toEqual({ memories: 0, learnings: 0, links: 0, domains: 0 });
    expect(none.recall).toEqual({ shown: 0, used: 0, memories: 0, neverShown: 0, neverUsed: 0 });
    expect((await a.dashboardFigures(window, MEMORY_TYPES, null)).counts.memories).toBe(5);
  });

  test("candidates to retire, tokens per day and feedback counts: of the scope alone", async () => {
    const a = s.storage.analytics;
    // Shown and never used: m3 (q) and m5 (no project); m2 was used.
    expect((await a.shownNeverUsed(10)).map((m) => m.id)).toEqual(["m3", "m5"]);
    expect((await a.shownNeverUsed(10, ["q"])).map((m) => m.id)).toEqual(["m3"]);
    expect(await a.shownNeverUsed(10, ["p"])).toEqual([]);
    const receipt = (id: string, project: string | null, at: number, tokens: number, injected: string[], used: string[]) =>
      dbRows(
        s,
        "INSERT INTO recall_receipts(id, at, kind, via, project, prompt_hash, tokens, injected, dropped, used) VALUES (?, ?, 'recall', 'hook', ?, 'h', ?, ?, '[]', ?)",
        [id, at, project, tokens, JSON.stringify(injected), JSON.stringify(used)],
      );
    await receipt("r1", "p", D0 + 1, 100, ["m1", "m2"], ["m2"]);
    await receipt("r2", "q", D0 + 2, 40, ["m3"], []);
    await receipt("r3", null, D0 + DAY, 7, ["m5"], []);
    const tokens = (scope?: readonly string[] | null) =>
      s.storage.receipts.dailyTokens(window.start, window.days, scope).then((d) => d.map((x) => [x.tokens, x.injected, x.used]));
    expect(await tokens()).toEqual([
      [140, 3, 1],
      [7, 1, 0],
      [0, 0, 0],
    ]);
    expect(await tokens(["p"])).toEqual([
      [100, 2, 1],
      [0, 0, 0],
      [0, 0, 0],
    ]);
    expect(await tokens(["q", "nobody"])).toEqual([
      [40, 1, 0],
      [0, 0, 0],
      [0, 0, 0],
    ]);
    const feedback = (id: string, kind: string) => dbRows(s, "INSERT INTO memory_events(memory_id, kind, at) VALUES (?, ?, ?)", [id, kind, D0 + 50]);
    await feedback("m1", "useful");
    await feedback("m3", "wrong");
    await feedback("m4", "wrong");
    const counts = (scope?: readonly string[] | null) =>
      s.storage.feedback
        .counts(D0, D0 + DAY, scope)
        .then((r) => Object.fromEntries([...r].sort((x, y) => x.kind.localeCompare(y.kind)).map((x) => [x.kind, x.n])));
    expect(await counts()).toEqual({ useful: 1, wrong: 2 });
    expect(await counts(["p"])).toEqual({ useful: 1 });
    expect(await counts(["q"])).toEqual({ wrong: 1 });
    await dbRows(s, "DELETE FROM memory_events WHERE kind IN ('useful', 'wrong')");
    await dbRows(s, "DELETE FROM recall_receipts");
  });
});

describe("domain index rows", () => {
  test("fingerprint, totals, every memory and tag row, per-project counts, newest samples first", async () => {
    const fp = await s.storage.analytics.memoriesFingerprint();
    const seqs = await dbRows<{ seq: number }>(s, "SELECT seq FROM memories");
    expect(fp).toEqual({ count: 5, maxSeq: Math.max(...seqs.map((r) => r.seq)) });
    const rows = await s.storage.analytics.domainRows();
    expect(rows.totals).toEqual({ memories: 5, learnings: 1, projects: 2 });
    expect([...rows.memories].sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: "m1", project: "p", memoryType: "knowledge" },
      { id: "m2", project: "p", memoryType: "learnings" },
      { id: "m3", project: "q", memoryType: "knowledge" },
      { id: "m4", project: null, memoryType: "notes" },
      { id: "m5", project: null, memoryType: "decisions" },
    ]);
    expect([...rows.tags].sort((a, b) => a.memoryId.localeCompare(b.memoryId) || a.tag.localeCompare(b.tag))).toEqual([
      { memoryId: "m1", tag: "alpha", weight: 1 },
      { memoryId: "m2", tag: "alpha", weight: 0.5 },
      { memoryId: "m2", tag: "beta", weight: 0.9 },
      { memoryId: "m4", tag: "gamma", weight: 1 },
    ]);
    expect(rows.projects[2]).toEqual({ project: "q", memories: 1, learnings: 0 });
    expect([...rows.projects.slice(0, 2)].sort((a, b) => String(a.project).localeCompare(String(b.project)))).toEqual([
      { project: null, memories: 2, learnings: 0 },
      { project: "p", memories: 2, learnings: 1 },
    ]);
    expect(await s.storage.analytics.domainSample("alpha", 5)).toEqual(["content of m2", "content of m1"]);
    expect(await s.storage.analytics.domainSample("alpha", 1)).toEqual(["content of m2"]);
    expect(await s.storage.analytics.domainSample("nothing", 5)).toEqual([]);
  });
});
