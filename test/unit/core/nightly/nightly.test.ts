import { afterEach, describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { fetchMemory } from "../../../../src/core/memories";
import { ingestMemory } from "../../../../src/core/ingest";
import { recallIndex } from "../../../../src/core/recall";
import { feedbackFromAnywhere, markUsedFromReceipt } from "../../../../src/core/receipts";
import { effectiveStrength } from "../../../../src/core/memories";
import { daysToRun, latestDigests, NightlyInterrupted, NightlyLeaseLost, runNightly, type NightlyProgress } from "../../../../src/core/nightly";
import { runScheduledNightly, startNightlySchedule } from "../../../../src/core/nightly";
import { PRUNE_MIN_AGE_DAYS } from "../../../../src/core/nightly/tuning";
import { ConfigError } from "../../../../src/errors";
import { createLlmClient } from "../../../../src/llm/client";
import { useFakeLlm } from "../../../helpers/fake-llm";
import { dbRows } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

const DAY = "2026-03-10";
const DAY_MS = 86_400_000;
let clock = Date.parse("2026-03-11T03:30:00Z");
const fake = useFakeLlm();
const open: TestServices[] = [];

afterEach(async () => {
  clock = Date.parse("2026-03-11T03:30:00Z");
  while (open.length) await open.pop()!.close();
});

function services(opts: { model?: boolean; llm?: Record<string, unknown>; nightly?: Record<string, unknown> } = {}): TestServices {
  const llm = opts.model === false ? {} : { llm: { baseURL: fake.baseURL, model: "fake-model", timeoutMs: 5000, ...opts.llm } };
  const s = makeServices({ now: () => clock, config: { ...llm, nightly: { enabled: true, ...opts.nightly } } });
  open.push(s);
  return s;
}

async function add(s: TestServices, content: string, project: string | null = "shop", date = DAY): Promise<string> {
  const r = await ingestMemory(s, { content, project, session_date: date });
  if (r.id === null) throw new Error("not stored");
  return r.id;
}

const q = <T>(s: TestServices, sql: string, ...args: (string | number)[]) => dbRows<T>(s, sql, args);
const learningsOf = (s: TestServices) =>
  q<{ id: string; content: string; project: string | null; source_agent: string }>(
    s,
    "SELECT id, content, project, source_agent FROM memories WHERE memory_type = 'learnings' ORDER BY seq",
  );
const runRow = (s: TestServices) =>
  q<{ status: string; cursor: string }>(s, "SELECT status, cursor FROM nightly_runs ORDER BY id DESC LIMIT 1").then((r) => r[0]);

const LESSON = "Run migrations with --lock-timeout=5s: without it the orders table locked for minutes and the deploy failed.";

describe("consolidation with a model", () => {
  test("learnings are stored as memory_type learnings, linked derived_from to their sources, and the digest says so", async () => {
    const s = services();
    const failed = await add(s, "The deploy failed because the migration locked the orders table for 4 minutes.");
    const fixed = await add(s, "Adding --lock-timeout=5s to the migration command made the next deploy pass.");
    await add(s, "Old unrelated note about the office coffee machine.", "shop", "2026-01-02");
    fake.script({
      json: {
        learnings: [
          { content: LESSON, sources: [1, "2"], tags: ["migrations"] },
          { content: "too short", sources: [1] },
          { content: "A lesson with no grounding in any listed memory at all.", sources: [9] },
        ],
      },
    });
    const out = await runNightly(s, { day: DAY });
    expect(out.ran).toBe(true);
    expect(fake.requests.length).toBe(1);
    const prompt = fake.receivedText();
    expect(prompt).toContain("locked the orders table");
    expect(prompt).not.toContain("coffee machine");
    const [learning] = await learningsOf(s);
    expect(learning).toMatchObject({ content: LESSON, project: "shop", source_agent: "nightly" });
    const sources = (
      await q<{ to_id: string }>(s, "SELECT to_id FROM links WHERE from_id = ? AND relationship = 'derived_from' ORDER BY to_id", learning.id)
    ).map((r) => r.to_id);
    expect(sources).toEqual([failed, fixed].sort());
    expect((await q<{ tag: string }>(s, "SELECT tag FROM memory_tags WHERE memory_id = ? ORDER BY weight DESC", learning.id)).map((t) => t.tag)).toEqual([
      "shop",
      "migrations",
    ]);
    expect(out.digest).toMatchObject({
      day: DAY,
      status: "done",
      considered: 2,
      read: 2,
      written: 1,
      rejected: 2,
      model_calls: 1,
      skipped: [],
      learnings: [learning.id.slice(0, 8)],
    });
    expect(await latestDigests(s, 5)).toEqual([{ ...out.digest!, run_id: expect.any(Number) }]);
  });

  test("no secret of a stored memory reaches the model, and a learning echoing one is stored redacted", async () => {
    const s = services();
    const id = await add(s, "placeholder");
    const secret = `ghp_${"Nightly7Secret".repeat(3)}`;
    // A memory written before every route redacted (ingest redacts now, so write it straight to the store).
    await dbRows(s, "UPDATE memories SET content = ? WHERE id = ?", [
      `The deploy failed until the push token ${secret} was rotated; machine ci login bot password Pw0rd-9x`,
      id,
    ]);
    fake.script({
      json: { learnings: [{ content: `Rotate the push token ${secret} before the deploy: the old one failed the migration run.`, sources: [1] }] },
    });
    await runNightly(s, { day: DAY });
    const prompt = fake.receivedText();
    expect(prompt).toContain("[REDACTED:github-token]");
    expect(prompt).not.toContain(secret);
    expect(prompt).not.toContain("Pw0rd-9x");
    const [learning] = await learningsOf(s);
    expect(learning.content).toBe("Rotate the push token [REDACTED:github-token] before the deploy: the old one failed the migration run.");
  });

  test("a day is consolidated once; --force runs it again", async () => {
    const s = services();
    await add(s, "The deploy failed because the migration locked the orders table.");
    fake.script({ json: { learnings: [{ content: LESSON, sources: [1] }] } });
    expect((await runNightly(s, { day: DAY })).ran).toBe(true);
    const again = await runNightly(s, { day: DAY });
    expect(again.ran).toBe(false);
    expect(again.message).toContain("already consolidated");
    expect(fake.requests.length).toBe(1);
    fake.script({ json: { learnings: [{ content: LESSON, sources: [1] }] } });
    const forced = await runNightly(s, { day: DAY, force: true });
    expect(forced.ran).toBe(true);
    expect(forced.digest!.forced).toBe(true);
    expect(fake.requests.length).toBe(2);
    // The identical learning of the forced run was merged into the first one.
    expect((await learningsOf(s)).length).toBe(1);
    expect(forced.digest!.merged).toBe(1);
    expect((await latestDigests(s, 10)).length).toBe(2);
  });

  test("model calls are capped per run; the rest is reported as skipped", async () => {
    const s = services({ nightly: { maxModelCalls: 2 } });
    for (const p of ["a", "b", "c", "d"]) await add(s, `In project ${p} the build broke because the lockfile was stale.`, `proj-${p}`);
    fake.fallback = () => ({ json: { learnings: [] } });
    const out = await runNightly(s, { day: DAY });
    expect(fake.requests.length).toBe(2);
    expect(out.digest).toMatchObject({ status: "done", model_calls: 2, max_model_calls: 2, read: 2, considered: 4 });
    expect(out.digest!.skipped).toEqual([{ step: "learn", reason: "model call cap reached (nightly.maxModelCalls = 2)", memories: 2 }]);
  });

  test("a hanging model times out: the run is partial, and a plain rerun resumes the learn step", async () => {
    const s = services({ llm: { timeoutMs: 300 } });
    await add(s, "The deploy failed because the migration locked the orders table.");
    fake.script({ hang: true });
    const first = await runNightly(s, { day: DAY });
    expect(first.digest!.status).toBe("partial");
    expect(first.digest!.steps).toEqual({ learn: "incomplete", recheck: "done", merge: "done", decay: "done", prune: "done" });
    expect(first.digest!.errors[0]).toContain("did not answer");
    expect(first.digest!.skipped[0]).toMatchObject({ step: "learn", memories: 1 });
    expect(await learningsOf(s)).toEqual([]);
    fake.script({ json: { learnings: [{ content: LESSON, sources: [1] }] } });
    const second = await runNightly(s, { day: DAY });
    expect(second.digest).toMatchObject({ status: "done", resumed: 1, written: 1, skipped: [], model_calls: 2 });
    expect((await learningsOf(s)).length).toBe(1);
  });

  test("a crash after the first chunk resumes at the second: nothing stored twice, nothing skipped", async () => {
    const s = services();
    for (const p of ["a", "b", "c"]) await add(s, `Project ${p}: the release failed because the changelog step ran before the version bump.`, `proj-${p}`);
    fake.fallback = (req) => {
      const project = /Project: (proj-\w)/.exec(req.body.messages[1].content)![1];
      return { json: { learnings: [{ content: `In ${project}, bump the version before generating the changelog, or the release fails.`, sources: [1] }] } };
    };
    let chunks = 0;
    const crash = (e: NightlyProgress) => {
      if (e.step === "learn" && /learnings? written/.test(e.message) && ++chunks === 1) throw new Error("simulated crash");
    };
    await expect(runNightly(s, { day: DAY, progress: crash })).rejects.toThrow("simulated crash");
    expect((await runRow(s)).status).toBe("running");
    expect((await learningsOf(s)).length).toBe(1);
    const out = await runNightly(s, { day: DAY });
    expect(out.digest).toMatchObject({ status: "done", resumed: 1, written: 3, read: 3, model_calls: 3 });
    expect(fake.requests.length).toBe(3);
    expect((await learningsOf(s)).map((l) => l.project)).toEqual(["proj-a", "proj-b", "proj-c"]);
  });

  test("an abort signal stops between units of work and the next run resumes", async () => {
    const s = services();
    await add(s, "The deploy failed because the migration locked the orders table.");
    fake.script({ json: { learnings: [{ content: LESSON, sources: [1] }] } });
    const abort = new AbortController();
    const stopAtMerge = (e: NightlyProgress) => e.step === "merge" && abort.abort();
    await expect(runNightly(s, { day: DAY, signal: abort.signal, progress: stopAtMerge })).rejects.toBeInstanceOf(NightlyInterrupted);
    const out = await runNightly(s, { day: DAY });
    expect(out.digest).toMatchObject({ status: "done", resumed: 1, written: 1, model_calls: 1 });
    expect(fake.requests.length).toBe(1);
  });

  test("a run in progress in another live process is left alone", async () => {
    const s = services();
    await dbRows(s, "INSERT INTO nightly_runs(day, status, owner, started_at, heartbeat_at, digest) VALUES (?, 'running', ?, ?, ?, '{}')", [
      DAY,
      `${hostname()}:${process.pid}:elsewhere`,
      clock,
      clock,
    ]);
    const out = await runNightly(s, { day: DAY });
    expect(out.ran).toBe(false);
    expect(out.message).toContain("in progress");
    // The same row, its owner silent past the lease, is taken over.
    clock += 60 * 60_000;
    await dbRows(s, "UPDATE nightly_runs SET digest = ?", [
      JSON.stringify({
        steps: { learn: "pending", merge: "pending", decay: "pending", prune: "pending" },
        skipped: [],
        errors: [],
        learnings: [],
        merges: [],
        resumed: 0,
        considered: 0,
        read: 0,
        written: 0,
        rejected: 0,
        merged: 0,
        dropped: 0,
        decayed: 0,
        sessions_expired: 0,
        model_calls: 0,
        max_model_calls: 40,
        day: DAY,
      }),
    ]);
    expect((await runNightly(s, { day: DAY })).digest).toMatchObject({ status: "done", resumed: 1 });
  });
});

describe("several servers over one database", () => {
  /** A second server over the same database: its own Services, connection, owner and scheduler state. */
  function secondServer(first: TestServices): TestServices {
    const s = makeServices({
      home: first.config.home,
      now: () => clock,
      config: { llm: { baseURL: fake.baseURL, model: "fake-model", timeoutMs: 5000 }, nightly: { enabled: true } },
    });
    open.push(s);
    return s;
  }
  const waitFor = async (what: () => boolean) => {
    for (let i = 0; i < 200 && !what(); i++) await Bun.sleep(25);
    expect(what()).toBe(true);
  };

  test("two servers start the same night at once: one runs it, the other finds it in progress", async () => {
    const a = services();
    const b = secondServer(a);
    await add(a, "The deploy failed because the migration locked the orders table.");
    let open!: () => void;
    const gate = new Promise((r) => (open = () => r(null)));
    fake.script({ wait: gate, then: { json: { learnings: [{ content: LESSON, sources: [1] }] } } });
    const first = [runNightly(a, { day: DAY }), runNightly(b, { day: DAY })];
    // Whoever won asks the model; the other has answered by then.
    await waitFor(() => fake.requests.length === 1);
    const loser = await Promise.race(first.map((p) => p.then((o) => (o.ran ? null : o))));
    open();
    const outcomes = await Promise.all(first);
    expect(outcomes.filter((o) => o.ran)).toHaveLength(1);
    expect(loser?.message).toContain("is in progress");
    expect(fake.requests.length).toBe(1);
    expect(await q<{ day: string; status: string }>(a, "SELECT day, status FROM nightly_runs")).toEqual([{ day: DAY, status: "done" }]);
    expect(await learningsOf(a)).toHaveLength(1);
    // Both schedules fire (one after the other: two SQLite connections in one
    // process would wait on each other's lock): the catch-up days run once.
    await runScheduledNightly(a);
    await runScheduledNightly(b);
    expect([...a.logs, ...b.logs].filter((l) => l.level === "error")).toEqual([]);
    expect((await q<{ n: number; days: number }>(a, "SELECT count(*) AS n, count(DISTINCT day) AS days FROM nightly_runs"))[0]).toEqual({ n: 3, days: 3 });
  });

  test("the owner goes silent mid-run: another server takes over from the cursor, the day completes once, and the old owner's late write is refused", async () => {
    const a = services();
    for (const p of ["a", "b", "c"]) await add(a, `Project ${p}: the release failed because the changelog step ran before the version bump.`, `proj-${p}`);
    const lesson = (project: string) => ({
      json: { learnings: [{ content: `In ${project}, bump the version before generating the changelog, or the release fails.`, sources: [1] }] },
    });
    fake.fallback = (req) => lesson(/Project: (proj-\w)/.exec(req.body.messages[1].content)![1]);
    let release!: () => void;
    const gate = new Promise((r) => (release = () => r(null)));
    // Server a learns proj-a, then hangs on proj-b (its answer arrives only after b has finished the day).
    fake.script(lesson("proj-a"), { wait: gate, then: lesson("proj-b") });
    const stalled = runNightly(a, { day: DAY });
    await waitFor(() => fake.requests.length === 2);
    const b = secondServer(a);
    const early = await runNightly(b, { day: DAY });
    expect(early).toMatchObject({ ran: false, message: expect.stringContaining("is in progress") });
    // Silent past the lease (its heartbeat stopped with the clock): b takes over where a stopped.
    clock += 16 * 60_000;
    const out = await runNightly(b, { day: DAY });
    expect(out.digest).toMatchObject({ status: "done", resumed: 1, written: 3, read: 3 });
    release();
    await expect(stalled).rejects.toBeInstanceOf(NightlyLeaseLost);
    // proj-b learned once (by b): a's late answer was rolled back with its refused progress.
    expect((await learningsOf(a)).map((l) => l.project)).toEqual(["proj-a", "proj-b", "proj-c"]);
    expect(fake.requests.length).toBe(4);
    expect(await q<{ status: string }>(a, "SELECT status FROM nightly_runs")).toEqual([{ status: "done" }]);
    expect((await runNightly(a, { day: DAY })).message).toContain("already consolidated");
  });
});

describe("without a model, and the non-model steps", () => {
  test("no model: learn is owed and the day partial; merge, decay and prune still run", async () => {
    const s = services({ model: false });
    const a = await add(s, "The staging database listens on port 5433 behind pgbouncer.");
    const b = await add(s, "The staging database listens on port 5433 behind pgbouncer!");
    await dbRows(s, "UPDATE memories SET used_count = 2, shown_count = 1 WHERE id = ?", [b]);
    const ignored = await add(s, "Use the blue-green switch script to cut traffic over to the new stack.");
    await dbRows(s, "UPDATE memories SET shown_count = 5 WHERE id = ?", [ignored]);
    await dbRows(s, "INSERT INTO memory_events(memory_id, kind, at) VALUES (?, 'shown', ?)", [ignored, Date.parse(`${DAY}T10:00:00Z`)]);
    const old = Date.parse("2025-06-01T00:00:00Z");
    const faded = await add(s, "A note about a vendor demo nobody ever looked at again.", "shop", "2025-06-01");
    const fadedLearning = await add(s, "A learning nobody looked at, kept because learnings are not pruned.", "shop", "2025-06-01");
    const usedOld = await add(s, "An old fact that was used once and so stays.", "shop", "2025-06-01");
    await dbRows(s, "UPDATE memories SET strength = 0.2, refreshed_at = ? WHERE id IN (?, ?, ?)", [old, faded, fadedLearning, usedOld]);
    await dbRows(s, "UPDATE memories SET memory_type = 'learnings' WHERE id = ?", [fadedLearning]);
    await dbRows(s, "UPDATE memories SET used_count = 1 WHERE id = ?", [usedOld]);
    await dbRows(s, "INSERT INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, 'related', 1, ?)", [faded, usedOld, clock]);
    const idleSession = "idle-session";
    await dbRows(s, "INSERT INTO recall_sessions(session_id, turn, updated_at) VALUES (?, 3, ?)", [idleSession, clock - 30 * DAY_MS]);

    for (const reason of ["filler", "filler", "tool noise"])
      await dbRows(s, "INSERT INTO distill_dropped(at, reason, content) VALUES (?, ?, ?)", [clock, reason, `fragment ${reason}`]);

    const progress: NightlyProgress[] = [];
    const out = await runNightly(s, { day: DAY, progress: (e) => progress.push(e) });
    expect(fake.requests.length).toBe(0);
    expect(out.digest).toMatchObject({ status: "partial", model: null, model_calls: 0, written: 0, merged: 1, decayed: 1, dropped: 1, sessions_expired: 1 });
    expect((await runRow(s)).status).toBe("partial");
    // Every step that starts says how it ended; the dropped fragments are progress lines too (the CLI prints those).
    const prune = progress.filter((e) => e.step === "prune").map((e) => e.message);
    expect(prune[0]).toBe("starting");
    expect(prune.at(-1)).toBe("done (1 faded memory deleted, 1 idle recall session forgotten, 3 dropped fragments reported)");
    expect(prune.filter((m) => m.startsWith("distill dropped (filler): fragment filler"))).toHaveLength(2);
    // The distiller's rejects went to the log and the digest, then were forgotten.
    expect(out.digest!.dropped_fragments).toEqual({ count: 3, by_reason: { filler: 2, "tool noise": 1 } });
    expect(s.logs.filter((l) => l.message.startsWith("nightly: distill dropped (filler)"))).toHaveLength(2);
    expect((await q<{ n: number }>(s, "SELECT count(*) AS n FROM distill_dropped"))[0].n).toBe(0);
    expect(out.digest!.steps).toEqual({ learn: "incomplete", recheck: "done", merge: "done", decay: "done", prune: "done" });
    expect(out.digest!.skipped).toEqual([{ step: "learn", reason: expect.stringMatching(/no language model configured.*learnings owed/), memories: 3 }]);
    expect(out.message).toStartWith(`nightly ${DAY} partial:`);
    expect(out.message).toContain("skipped learn (3 memories)");
    // Merge kept the used copy and folded the other's counters into it.
    const ids = (await q<{ id: string }>(s, "SELECT id FROM memories")).map((r) => r.id);
    expect(ids).toContain(b);
    expect(ids).not.toContain(a);
    expect((await q<{ used_count: number }>(s, "SELECT used_count FROM memories WHERE id = ?", b))[0].used_count).toBe(2);
    // ...and kept the folded-in text as a version of the survivor (what the merge replaced).
    expect(
      await q<{ content: string; reason: string; source_id: string }>(s, "SELECT content, reason, source_id FROM memory_history WHERE memory_id = ?", b),
    ).toEqual([{ content: "The staging database listens on port 5433 behind pgbouncer.", reason: "nightly-merge", source_id: a }]);
    expect((await q<{ strength: number }>(s, "SELECT strength FROM memories WHERE id = ?", ignored))[0].strength).toBeCloseTo(0.9);
    // Pruning deleted the faded memory with its vector and links, and nothing else.
    expect(ids).not.toContain(faded);
    expect(ids).toEqual(expect.arrayContaining([fadedLearning, usedOld]));
    expect((await q<{ n: number }>(s, "SELECT count(*) AS n FROM links WHERE from_id = ? OR to_id = ?", faded, faded))[0].n).toBe(0);
    expect((await q<{ n: number }>(s, "SELECT count(*) AS n FROM memory_vec"))[0].n).toBe(ids.length);
    expect((await q<{ n: number }>(s, "SELECT count(*) AS n FROM recall_sessions WHERE session_id = ?", idleSession))[0].n).toBe(0);
    expect(PRUNE_MIN_AGE_DAYS).toBeLessThan((clock - old) / DAY_MS);
  });

  test("owed learnings are written by the next run once a model is configured; a day with nothing to learn is done", async () => {
    const s = services({ model: false });
    await add(s, "The deploy failed because the migration locked the orders table.");
    const first = await runNightly(s, { day: DAY });
    expect(first.digest).toMatchObject({ status: "partial", written: 0 });
    // Without a model a rerun stays partial and asks nothing of anyone.
    const again = await runNightly(s, { day: DAY });
    expect(again).toMatchObject({ ran: true, digest: { status: "partial", resumed: 1 } });
    const empty = await runNightly(s, { day: "2026-03-09" });
    expect(empty.digest).toMatchObject({ status: "done", considered: 0 });
    // The schedule without a model does not chase owed days beyond its catch-up window...
    clock += 10 * DAY_MS;
    expect(await daysToRun(s)).not.toContain(DAY);
    // ...but with one it does, and pays the debt.
    // (Services build their client once, from config: as a restart with the model configured would.)
    Object.assign(s.config.llm, { baseURL: fake.baseURL, model: "fake-model", timeoutMs: 5000 });
    Object.defineProperty(s, "llm", { value: createLlmClient(s.config.llm, s.config.paths.state) });
    expect((await daysToRun(s))[0]).toBe(DAY);
    fake.script({ json: { learnings: [{ content: LESSON, sources: [1] }] } });
    await runScheduledNightly(s);
    const last = (await latestDigests(s, 20)).find((d) => d.day === DAY)!;
    expect(last).toMatchObject({ status: "done", written: 1, model: expect.stringContaining("fake-model"), resumed: 2 });
    expect(await learningsOf(s)).toHaveLength(1);
    expect(await daysToRun(s)).not.toContain(DAY);
  });

  test("dry run reports and writes nothing", async () => {
    const s = services();
    await add(s, "The staging database listens on port 5433 behind pgbouncer.");
    await add(s, "The staging database listens on port 5433 behind pgbouncer!");
    const before = (await q<{ n: number }>(s, "SELECT count(*) AS n FROM memories"))[0].n;
    const out = await runNightly(s, { day: DAY, dryRun: true });
    expect(out.digest).toMatchObject({ status: "dry-run", considered: 2, read: 2, model_calls: 1, merged: 1 });
    expect(fake.requests.length).toBe(0);
    expect((await q<{ n: number }>(s, "SELECT count(*) AS n FROM memories"))[0].n).toBe(before);
    expect((await q<{ n: number }>(s, "SELECT count(*) AS n FROM nightly_runs"))[0].n).toBe(0);
  });

  test("bad days are refused", async () => {
    const s = services();
    for (const day of ["2026-02-30", "yesterday", "2026-3-1", "2099-01-01"]) await expect(runNightly(s, { day })).rejects.toThrow(/day/);
  });
});

describe("schedule", () => {
  test("off with nightly.enabled false; a bad cron expression is a configuration error", () => {
    const off = services({ nightly: { enabled: false } });
    off.logs.length = 0;
    startNightlySchedule(off).stop();
    expect(off.logs.some((l) => l.message.includes("schedule off"))).toBe(true);
    const bad = services({ nightly: { schedule: "every night please" } });
    expect(() => startNightlySchedule(bad)).toThrow(ConfigError);
  });

  test("a delayed schedule checks the expression at once and sets the job up later (or never, when stopped first)", async () => {
    const bad = services({ nightly: { schedule: "every night please" } });
    expect(() => startNightlySchedule(bad, { delayMs: 50 })).toThrow(ConfigError);
    const s = services();
    s.logs.length = 0;
    const scheduled = () => s.logs.some((l) => l.message.includes("nightly consolidation scheduled"));
    const schedule = startNightlySchedule(s, { delayMs: 20 });
    expect(scheduled()).toBe(false);
    for (let i = 0; i < 100 && !scheduled(); i++) await Bun.sleep(10);
    schedule.stop();
    expect(scheduled()).toBe(true);
    const early = services();
    early.logs.length = 0;
    startNightlySchedule(early, { delayMs: 20 }).stop();
    await Bun.sleep(60);
    expect(early.logs.some((l) => l.message.includes("nightly consolidation scheduled"))).toBe(false);
  });

  test("the scheduled job consolidates yesterday and catches up on unfinished recent days", async () => {
    const s = services({ model: false });
    await add(s, "The deploy failed because the migration locked the orders table.", "shop", "2026-03-08");
    await runScheduledNightly(s);
    // Without a model the day with a memory stays partial (learnings owed); the empty days are done.
    expect(await q<{ day: string; status: string }>(s, "SELECT day, status FROM nightly_runs ORDER BY day")).toEqual([
      { day: "2026-03-08", status: "partial" },
      { day: "2026-03-09", status: "done" },
      { day: "2026-03-10", status: "done" },
    ]);
    expect((await latestDigests(s, 3)).find((d) => d.day === "2026-03-08")!.considered).toBe(1);
    await runScheduledNightly(s);
    expect((await q<{ n: number }>(s, "SELECT count(*) AS n FROM nightly_runs"))[0].n).toBe(3);
  });

  test("a started schedule fires and runs the job", async () => {
    const s = services({ model: false, nightly: { schedule: "* * * * * *" } });
    const schedule = startNightlySchedule(s);
    try {
      for (let i = 0; i < 50 && (await q<{ n: number }>(s, "SELECT count(*) AS n FROM nightly_runs WHERE status = 'done'"))[0].n < 3; i++) await Bun.sleep(100);
    } finally {
      schedule.stop();
      await s.drain();
    }
    expect((await q<{ n: number }>(s, "SELECT count(*) AS n FROM nightly_runs WHERE status = 'done'"))[0].n).toBe(3);
  });
});

describe("memsvc nightly (CLI)", () => {
  test("runs the consolidation with progress on stderr, then says the day is done; bad flags are usage errors", async () => {
    const { BUN, childEnv, run } = await import("../../../helpers/process");
    const s = makeServices({ config: { llm: { baseURL: fake.baseURL, model: "fake-model", timeoutMs: 5000 } } });
    const home = s.config.home;
    const day = new Date(Date.now() - DAY_MS).toISOString().slice(0, 10);
    await add(s, "The deploy failed because the migration locked the orders table.", "shop", day);
    await s.close();
    fake.script({ json: { learnings: [{ content: LESSON, sources: [1] }] } });
    const env = childEnv(home);
    const first = await run([BUN, "src/main.ts", "nightly"], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`nightly ${day} done: read 1/1 memory, wrote 1 learning`);
    expect(first.stderr).toContain(`nightly ${day} learn`);
    const again = await run([BUN, "src/main.ts", "nightly", "--day", day, "--json"], env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ day, status: "done", written: 1 });
    const help = await run([BUN, "src/main.ts", "nightly", "--help"], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--dry-run");
    const bad = await run([BUN, "src/main.ts", "nightly", "--day", "2026-13-01"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--day");
  });

  test("without a model: exit 3 and partial, the dropped fragments and prune's closing line printed; with a model later, the owed day is learned", async () => {
    const { BUN, childEnv, run } = await import("../../../helpers/process");
    const { writeFileSync, readFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const s = makeServices({});
    const home = s.config.home;
    const owedDay = new Date(Date.now() - 2 * DAY_MS).toISOString().slice(0, 10);
    await add(s, "The deploy failed because the migration locked the orders table.", "shop", owedDay);
    await dbRows(s, "INSERT INTO distill_dropped(at, reason, content) VALUES (?, 'filler', 'Sure, I can help with that.')", [Date.now()]);
    await s.close();
    const env = childEnv(home);
    const partial = await run([BUN, "src/main.ts", "nightly", "--day", owedDay], env);
    expect(partial.code).toBe(3);
    expect(partial.stdout).toContain(`nightly ${owedDay} partial: read 0/1 memory`);
    expect(partial.stdout).toContain("learnings owed");
    expect(partial.stderr).toContain(`nightly ${owedDay} prune: distill dropped (filler): Sure, I can help with that.`);
    expect(partial.stderr).toContain(`nightly ${owedDay} prune: starting`);
    expect(partial.stderr).toContain(
      `nightly ${owedDay} prune: done (0 faded memories deleted, 0 idle recall sessions forgotten, 1 dropped fragment reported)`,
    );
    const json = await run([BUN, "src/main.ts", "nightly", "--day", owedDay, "--json"], env);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toMatchObject({ day: owedDay, status: "partial", steps: { learn: "incomplete" } });
    // A model is configured: a plain run (no --day) pays the owed day, then does yesterday.
    const config = JSON.parse(readFileSync(join(home, "config.json"), "utf8"));
    writeFileSync(join(home, "config.json"), JSON.stringify({ ...config, llm: { baseURL: fake.baseURL, model: "fake-model", timeoutMs: 5000 } }));
    fake.script({ json: { learnings: [{ content: LESSON, sources: [1] }] } });
    const paid = await run([BUN, "src/main.ts", "nightly"], env);
    expect(paid.code).toBe(0);
    expect(paid.stdout).toContain(`nightly ${owedDay} done: read 1/1 memory, wrote 1 learning`);
    expect(paid.stdout).toContain(`nightly ${new Date(Date.now() - DAY_MS).toISOString().slice(0, 10)} done:`);
    expect(fake.requests.length).toBe(1);
  });
});

describe("decay through real recall and fetch events", () => {
  test("shown at least 3 times and not fetched loses 10%; shown and fetched, or shown fewer than 3 times, keeps its strength", async () => {
    const s = services({ model: false });
    await add(s, "Use the blue-green switch script to cut traffic over to the new stack during deploys.");
    await add(s, "The blue-green deploy keeps the old stack warm for ten minutes before the switch is final.");
    await add(s, "The staging Postgres database listens on port 5433 behind pgbouncer.");
    await add(s, "The React frontend is built with Vite into dist and served by nginx.");
    clock = Date.parse(`${DAY}T10:00:00Z`);
    // Three sessions see the deploy memories (a session suppresses repeats), one sees the database once.
    const deployShown = new Set<string>();
    for (const session of ["a", "b", "c"]) {
      const r = (await recallIndex(s, { session_id: session, prompt: "how does the blue-green deploy switch traffic to the new stack?", project: "shop" })) as {
        shown?: string[];
      };
      for (const id of r.shown ?? []) deployShown.add(id);
    }
    await recallIndex(s, { session_id: "d", prompt: "which port does the staging postgres database listen on?", project: "shop" });
    const stats = async () =>
      new Map((await q<{ id: string; shown_count: number; strength: number }>(s, "SELECT id, shown_count, strength FROM memories")).map((r) => [r.id, r]));
    const shown = await stats();
    const often = [...shown.values()].filter((m) => m.shown_count >= 3).map((m) => m.id);
    const rarely = [...shown.values()].filter((m) => m.shown_count > 0 && m.shown_count < 3).map((m) => m.id);
    expect(often.length).toBeGreaterThanOrEqual(2);
    expect(rarely.length).toBeGreaterThanOrEqual(1);
    // One of the often-shown memories is fetched (used) the same day; its strength after the fetch is the baseline.
    const used = often[0];
    clock = Date.parse(`${DAY}T11:00:00Z`);
    await fetchMemory(s, used);
    const before = await stats();
    expect((await q<{ kind: string }>(s, "SELECT kind FROM memory_events WHERE memory_id = ? ORDER BY at", used)).map((e) => e.kind)).toEqual([
      "shown",
      "shown",
      "shown",
      "used",
    ]);

    clock = Date.parse("2026-03-11T03:30:00Z");
    const out = await runNightly(s, { day: DAY });
    expect(out.digest!.steps.decay).toBe("done");
    const after = await stats();
    expect(after.get(used)!.strength).toBeCloseTo(before.get(used)!.strength, 6);
    for (const id of often.slice(1)) expect(after.get(id)!.strength).toBeCloseTo(before.get(id)!.strength * 0.9, 6);
    for (const id of rarely) expect(after.get(id)!.strength).toBeCloseTo(before.get(id)!.strength, 6);
    expect(out.digest!.decayed).toBe(often.length - 1);
  });
});

describe("the nightly run reads use detection and feedback", () => {
  test("a use the capture client detected keeps a memory from decay; the day's feedback is counted in the digest", async () => {
    const s = services({ model: false });
    await add(s, "Use the blue-green switch script to cut traffic over to the new stack during deploys.");
    await add(s, "The blue-green deploy keeps the old stack warm for ten minutes before the switch is final.");
    clock = Date.parse(`${DAY}T10:00:00Z`);
    const shown: string[] = [];
    for (const session of ["a", "b", "c"]) {
      const r = (await recallIndex(s, { session_id: session, prompt: "how does the blue-green deploy switch traffic to the new stack?", project: "shop" })) as {
        shown?: string[];
      };
      shown.push(...(r.shown ?? []));
    }
    const [used, ignored] = [...new Set(shown)];
    expect(shown.filter((id) => id === used)).toHaveLength(3);
    expect(shown.filter((id) => id === ignored)).toHaveLength(3);
    // What capture/use.ts sends after reading the agent's turns (POST /recall/used), then a person's feedback.
    expect((await markUsedFromReceipt(s, { session_id: "c", ids: [used] })).used).toEqual([used]);
    await feedbackFromAnywhere(s, { id: ignored, kind: "outdated", note: "the window is five minutes now" }, "cli");
    const strength = async (id: string) => (await q<{ strength: number }>(s, "SELECT strength FROM memories WHERE id = ?", id))[0].strength;
    const before = { used: await strength(used), ignored: await strength(ignored) };
    clock = Date.parse("2026-03-11T03:30:00Z");
    const out = await runNightly(s, { day: DAY });
    expect(await strength(used)).toBeCloseTo(before.used, 6);
    expect(await strength(ignored)).toBeCloseTo(before.ignored * 0.9, 6);
    expect(out.digest!.feedback).toMatchObject({ outdated: 1, wrong: 0, useful: 0, irrelevant: 0 });
  });
});

describe("the decay curve", () => {
  test("halves every 30 days towards a floor of 0.15 (docs/api.md: How recall ranks, Decay)", () => {
    expect(effectiveStrength(1, 0, 0)).toBeCloseTo(1, 9);
    expect(effectiveStrength(1, 0, 30 * DAY_MS)).toBeCloseTo(0.15 + 0.85 * 0.5, 9);
    expect(effectiveStrength(1, 0, 60 * DAY_MS)).toBeCloseTo(0.15 + 0.85 * 0.25, 9);
    expect(effectiveStrength(2, 0, 3650 * DAY_MS)).toBeCloseTo(0.3, 6);
    // A clock that went backwards never strengthens.
    expect(effectiveStrength(1, 10 * DAY_MS, 0)).toBeCloseTo(1, 9);
  });
});
