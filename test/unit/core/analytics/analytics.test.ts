import { afterEach, describe, expect, test } from "bun:test";
import { account } from "../../../../src/core/analytics";
import { dashboardData } from "../../../../src/core/analytics";
import { ingestMemory } from "../../../../src/core/ingest";
import { deleteMemory, updateMemory } from "../../../../src/core/memories";
import { feedbackFromAnywhere, markUsedFromReceipt } from "../../../../src/core/receipts";
import { recallIndex } from "../../../../src/core/recall";
import { DAY, EXPECTED, NOW, TODAY, movableClock, seedDashboard } from "../../../helpers/dashboard-seed";
import { onPostgres } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

let s: TestServices | null = null;
afterEach(async () => {
  await s?.close();
  s = null;
});

async function seeded(config: Record<string, unknown> = {}) {
  const clock = movableClock();
  s = makeServices({ now: clock.now, config });
  const ids = await seedDashboard(s, clock);
  return { s, ids, clock };
}

describe("dashboardData on a seeded history", () => {
  test("counts, window and generated_at", async () => {
    const { s } = await seeded();
    const d = await dashboardData(s);
    expect(d.counts).toEqual(EXPECTED.counts);
    expect(d.window).toEqual(EXPECTED.window);
    expect(d.generated_at).toBe(new Date(NOW).toISOString());
  });

  test("growth: one entry per day, added by type, cumulative from the base of older memories", async () => {
    const { s } = await seeded();
    const g = (await dashboardData(s)).growth;
    expect(g.base).toBe(EXPECTED.growth.base);
    expect(g.types).toEqual(["knowledge", "experience", "decisions", "learnings"]);
    expect(g.days.length).toBe(30);
    expect(g.days[0].day).toBe("2026-02-14");
    expect(g.days[29].day).toBe("2026-03-15");
    let expectedTotal = EXPECTED.growth.base;
    for (const day of g.days) {
      const [knowledge, experience, decisions, learnings] = EXPECTED.growth.added[day.day] ?? [0, 0, 0, 0];
      expect({ day: day.day, ...day.by_type } as Record<string, unknown>).toEqual({ day: day.day, knowledge, experience, decisions, learnings });
      expect(day.added).toBe(knowledge + experience + decisions + learnings);
      expectedTotal += day.added;
      expect(day.total).toBe(expectedTotal);
    }
    for (const [day, total] of Object.entries(EXPECTED.growth.totals)) {
      const found = g.days.find((x) => x.day === day);
      if (total === null) expect(found).toBeUndefined();
      else expect(found?.total).toBe(total);
    }
    expect(g.days[29].total).toBe(EXPECTED.counts.memories);
  });

  test("a shorter window moves memories into the base", async () => {
    const { s } = await seeded();
    const g = (await dashboardData(s, { days: 7 })).growth;
    expect(g.days.map((x) => x.day)).toEqual(["2026-03-09", "2026-03-10", "2026-03-11", "2026-03-12", "2026-03-13", "2026-03-14", "2026-03-15"]);
    expect(g.base).toBe(8);
    expect(g.days.map((x) => x.total)).toEqual([8, 8, 8, 8, 8, 9, 12]);
  });

  test("domain composition: primary domain = heaviest tag, top 8 + other, untagged as general", async () => {
    const { s } = await seeded();
    expect((await dashboardData(s)).domains).toEqual(EXPECTED.domains);
  });

  test("the composition follows tag changes and deletions (kept by triggers)", async () => {
    const { s, ids } = await seeded();
    await updateMemory(s, { id: ids.m9, project: "atlas" }); // its tags become atlas (1) + kafka
    await deleteMemory(s, ids.m1);
    const d = (await dashboardData(s)).domains;
    expect(d.top.slice(0, 2)).toEqual([
      { domain: "atlas", memories: 3 },
      { domain: "billing", memories: 2 },
    ]);
    expect(d.top.find((x) => x.domain === "kafka")).toBeUndefined();
    expect(d.primary_domains).toBe(8);
    expect(d.top.reduce((a, x) => a + x.memories, 0) + d.other.memories).toBe(11);
  });

  test("recall adoption: showings, uses, uses per showing, never-shown and never-used shares, per day", async () => {
    const { s } = await seeded();
    const r = (await dashboardData(s)).recall;
    const { days: expectedDays, ...totals } = EXPECTED.recall;
    expect({ ...r, days: undefined }).toEqual({ ...totals, days: undefined });
    expect(r.days.length).toBe(30);
    for (const day of r.days) {
      const [showings, uses, ratio] = expectedDays[day.day] ?? [0, 0, null];
      expect(day).toEqual({ day: day.day, showings, uses, uses_per_showing: ratio });
    }
  });

  test("the latest seven nightly digests, newest first, as stored", async () => {
    const { s } = await seeded();
    const n = (await dashboardData(s)).nightly!;
    expect(n.map((x) => x.day)).toEqual(EXPECTED.nightlyDays);
    const partial = n.find((x) => x.day === "2026-03-09")!;
    expect(partial.status).toBe("partial");
    expect(partial.written).toBe(3);
    expect(partial.skipped).toEqual([{ step: "learn", reason: "model failed: timeout" }]);
    expect(n[0]).toMatchObject({ written: 8, merged: 2, dropped: 0, decayed: 16, model_calls: 9 });
  });

  test("days: default 30, capped at 365, 400 for anything but a positive integer", async () => {
    const { s } = await seeded();
    expect((await dashboardData(s, { days: 365 })).growth.days.length).toBe(365);
    expect((await dashboardData(s, { days: 5000 })).window.days).toBe(365);
    expect((await dashboardData(s, { days: 1 })).recall.days).toEqual([{ day: "2026-03-15", showings: 3, uses: 1, uses_per_showing: 0.333 }]);
    for (const bad of ["0", "-3", "abc", "2.5"]) await expect(dashboardData(s, { days: bad } as never)).rejects.toThrow("days must be a positive integer");
  });

  test("a year-long window counts everything: its totals agree with the counts", async () => {
    const { s } = await seeded();
    const d = await dashboardData(s, { days: 365 });
    expect(d.growth.base).toBe(0);
    expect(d.growth.days.at(-1)!.total).toBe(12);
    expect(d.recall.days.reduce((a, x) => a + x.showings, 0)).toBe(13);
    expect(d.recall.days.reduce((a, x) => a + x.uses, 0)).toBe(6);
    expect(d.recall.days.find((x) => x.day === new Date(TODAY - 45 * DAY).toISOString().slice(0, 10))).toEqual({
      day: "2026-01-29",
      showings: 3,
      uses: 2,
      uses_per_showing: 0.667,
    });
  });
});

describe("dashboardData on an empty store", () => {
  test("zeros, null ratios and shares, empty lists, and the account block", async () => {
    s = makeServices({ now: () => NOW });
    const d = await dashboardData(s);
    expect(d.counts).toEqual({ memories: 0, learnings: 0, links: 0, domains: 0 });
    expect(d.growth.base).toBe(0);
    expect(d.growth.days.every((x) => x.added === 0 && x.total === 0)).toBe(true);
    expect(d.domains).toEqual({ primary_domains: 0, top: [], other: { domains: 0, memories: 0 } });
    expect(d.recall).toMatchObject({
      showings: 0,
      uses: 0,
      uses_per_showing: null,
      never_shown: 0,
      never_used: 0,
      never_shown_share: null,
      never_used_share: null,
    });
    expect(d.recall.days.every((x) => x.uses_per_showing === null)).toBe(true);
    expect(d.nightly).toEqual([]);
    expect(d.account).toEqual({ name: null, org: null, plan: null });
  });
});

describe("dashboardData: what memory put into prompts (receipts) and the feedback", () => {
  test("tokens injected per day, the share used, feedback counts, and the memories shown but never used", async () => {
    s = makeServices({ now: () => NOW });
    const pg = (await ingestMemory(s, { content: "The staging Postgres database listens on port 5433 behind pgbouncer.", project: "infra" })).id!;
    const pool = (await ingestMemory(s, { content: "The staging Postgres database pool is pgbouncer in transaction mode, port 6432.", project: "infra" })).id!;
    const r = await recallIndex(
      s,
      { session_id: "dash", prompt: "which port does the staging postgres database pool listen on?", project: "infra" },
      { explain: true },
    );
    expect(r.explain!.injected.map((m) => m.id).sort()).toEqual([pg, pool].sort());
    await markUsedFromReceipt(s, { receipt: r.explain!.id, ids: [pg] });
    await feedbackFromAnywhere(s, { id: pool, kind: "outdated", note: "session mode now" }, "page");
    const d = (await dashboardData(s)).receipts;
    expect(d.days.at(-1)).toEqual({ date: "2026-03-15", tokens: r.explain!.tokens, injected: 2, used: 1 });
    expect(d.days.slice(0, -1).every((x) => x.tokens === 0 && x.injected === 0)).toBe(true);
    expect(d).toMatchObject({ tokens: r.explain!.tokens, injected: 2, used: 1, used_share: 0.5 });
    expect(d.tokens).toBeGreaterThan(0);
    expect(d.feedback).toMatchObject({ outdated: 1, wrong: 0, useful: 0, irrelevant: 0 });
    expect(d.shown_never_used.map((m) => m.id)).toEqual([pool]);
  });
});

describe("account", () => {
  test("null for each absent key, the strings when set", async () => {
    s = makeServices();
    expect(account(s)).toEqual({ account: { name: null, org: null, plan: null } });
    await s.close();
    s = makeServices({ config: { displayName: "Ada", planLabel: "Team" } });
    expect(account(s)).toEqual({ account: { name: "Ada", org: null, plan: "Team" } });
    await s.close();
    s = makeServices({ config: { displayName: "Ada", orgName: "Analytical Engines", planLabel: "Team" } });
    expect(account(s)).toEqual({ account: { name: "Ada", org: "Analytical Engines", plan: "Team" } });
    expect((await dashboardData(s)).account).toEqual({ name: "Ada", org: "Analytical Engines", plan: "Team" });
  });
});

describe("migration 0003 on a store written before it", () => {
  test.skipIf(onPostgres)(
    "fills memory_primary_domain from the tags already stored [SQLite's migration 0003; PostgreSQL's 0001 has the table from the start]",
    async () => {
      const { openStore } = await import("../../../../src/store/sqlite");
      s = makeServices();
      const { home, db: file } = s.config.paths;
      await s.close();
      s = null;
      // Back to the schema before 0003, with tagged memories in it.
      const old = openStore(file);
      old.sqlite.run(`DROP TABLE memory_primary_domain; DROP TRIGGER memory_tags_primary_insert; DROP TRIGGER memory_tags_primary_delete; DROP TRIGGER memory_tags_primary_update;
      DROP INDEX memory_events_kind_at; DROP INDEX memories_type_created; DROP INDEX memories_never_shown; DROP INDEX memories_never_used;
      UPDATE meta SET value = '2' WHERE key = 'schema_version'`);
      old.sqlite.run(
        "INSERT INTO memories(id, content, memory_type, created_at, updated_at, refreshed_at) VALUES ('a', 'x', 'knowledge', 1, 1, 1), ('b', 'y', 'knowledge', 1, 1, 1), ('c', 'z', 'knowledge', 1, 1, 1)",
      );
      old.sqlite.run("INSERT INTO memory_tags(memory_id, tag, weight) VALUES ('a', 'zeta', 0.8), ('a', 'beta', 0.5), ('b', 'omega', 0.7), ('b', 'alpha', 0.7)");
      old.close();
      s = makeServices({ home, now: () => NOW });
      expect(s.store.sqlite.query("SELECT memory_id, domain FROM memory_primary_domain ORDER BY memory_id").all()).toEqual([
        { memory_id: "a", domain: "zeta" },
        { memory_id: "b", domain: "alpha" }, // a tie goes to the first name
      ]);
      expect((await dashboardData(s)).domains.top).toEqual([
        { domain: "alpha", memories: 1 },
        { domain: "general", memories: 1 },
        { domain: "zeta", memories: 1 },
      ]);
    },
  );
});
