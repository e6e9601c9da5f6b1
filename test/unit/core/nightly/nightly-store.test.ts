import { afterEach, describe, expect, test } from "bun:test";
import type { NightlyStore } from "../../../../src/core/nightly";
import { DIMENSIONS } from "../../../../src/embed/types";
import { dbRows, onPostgres } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

// The nightly run lease as the engines keep it: every claim is one statement
// that exactly one of several servers wins, whatever they read before.

const DAY = "2026-03-10";
const open: TestServices[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

/** Two servers' stores over one database (each its own connection). */
function twoServers(): [NightlyStore, NightlyStore] {
  const a = makeServices();
  const b = makeServices({ home: a.config.home });
  open.push(a, b);
  return [a.storage.nightly, b.storage.nightly];
}

const start = (store: NightlyStore, owner: string, afterId = 0, day = DAY) =>
  store.startRun({ day, forced: false, owner, now: 1000, digest: `{"by":"${owner}"}`, afterId });

describe("nightly run lease", () => {
  test("a day starts once: a second start is refused while it runs, and after it finished unless the caller saw the finished run", async () => {
    const [a, b] = twoServers();
    const id = await start(a, "a");
    expect(id).toBeGreaterThan(0);
    expect(await start(b, "b")).toBeNull();
    expect(await a.finishRun(id!, "a", { status: "done", cursor: "{}", digest: "{}", now: 2000 })).toBe(true);
    // b read the day before a's run existed: it must not start a second one.
    expect(await start(b, "b", 0)).toBeNull();
    // A forced rerun that saw the finished run starts a new one.
    const again = await start(b, "b", id!);
    expect(again).toBeGreaterThan(id!);
    expect((await a.lastRun(DAY))!).toMatchObject({ id: again, owner: "b", status: "running", forced: false, heartbeatAt: 1000, finishedAt: null });
  });

  test("two servers starting the same day at the same moment: exactly one wins", async () => {
    const [a, b] = twoServers();
    for (let i = 0; i < 5; i++) {
      const day = `2026-03-0${i + 1}`;
      const ids = await Promise.all([start(a, "a", 0, day), start(b, "b", 0, day), start(a, "a2", 0, day), start(b, "b2", 0, day)]);
      expect(ids.filter((x) => x !== null)).toHaveLength(1);
    }
    expect(await a.latestRuns(100)).toHaveLength(5);
  });

  test("a take-over succeeds only on the row as it was read: of two servers taking over one stale run, one wins", async () => {
    const [a, b] = twoServers();
    const id = (await start(a, "dead"))!;
    const seen = (await a.lastRun(DAY))!;
    const next = (owner: string) => ({
      owner,
      now: 5000,
      forced: false,
      startedAt: seen.startedAt,
      cursor: `{"merge":${owner.length}}`,
      digest: `{"by":"${owner}"}`,
    });
    const won = await Promise.all([a.takeOverRun(seen, next("a")), b.takeOverRun(seen, next("bb"))]);
    expect(won.filter(Boolean)).toHaveLength(1);
    const row = (await a.lastRun(DAY))!;
    expect(row.owner).toBe(won[0] ? "a" : "bb");
    expect(row).toMatchObject({ id, status: "running", heartbeatAt: 5000 });
    // A stale read (the heartbeat moved on) takes nothing.
    expect(await b.takeOverRun(seen, next("late"))).toBe(false);
  });

  test("only the owner saves, beats and finishes; a lost lease is reported, not overwritten", async () => {
    const [a, b] = twoServers();
    const id = (await start(a, "a"))!;
    expect(await a.saveRun(id, "a", { cursor: '{"merge":7}', digest: '{"n":1}', now: 1500 })).toBe(true);
    expect(await b.saveRun(id, "b", { cursor: "{}", digest: "{}", now: 1600 })).toBe(false);
    expect(await b.heartbeat(id, "b", 1600)).toBe(false);
    expect(await a.heartbeat(id, "a", 1700)).toBe(true);
    const seen = (await b.lastRun(DAY))!;
    expect(seen).toMatchObject({ cursor: '{"merge":7}', digest: '{"n":1}', heartbeatAt: 1700 });
    // b takes over (a went silent): a's next save, beat and finish are refused.
    expect(await b.takeOverRun(seen, { owner: "b", now: 9000, forced: false, startedAt: seen.startedAt, cursor: seen.cursor, digest: seen.digest })).toBe(true);
    expect(await a.saveRun(id, "a", { cursor: "{}", digest: "{}", now: 9100 })).toBe(false);
    expect(await a.heartbeat(id, "a", 9100)).toBe(false);
    expect(await a.finishRun(id, "a", { status: "done", cursor: "{}", digest: "{}", now: 9100 })).toBe(false);
    expect(await b.finishRun(id, "b", { status: "partial", cursor: '{"merge":7}', digest: '{"n":2}', now: 9200 })).toBe(true);
    expect(await b.saveRun(id, "b", { cursor: "{}", digest: "{}", now: 9300 })).toBe(false);
    expect((await a.lastRun(DAY))!).toMatchObject({ status: "partial", finishedAt: 9200, cursor: '{"merge":7}', digest: '{"n":2}' });
  });

  test("partial days are those whose newest run is partial; latest runs come newest first", async () => {
    const [a] = twoServers();
    const finish = async (day: string, status: string, afterId = 0) => {
      const id = (await start(a, "a", afterId, day))!;
      await a.finishRun(id, "a", { status, cursor: "{}", digest: `{"day":"${day}"}`, now: 3000 });
      return id;
    };
    await finish("2026-03-01", "partial");
    const owedThenPaid = await finish("2026-03-02", "partial");
    await finish("2026-03-02", "done", owedThenPaid);
    await finish("2026-03-03", "partial");
    await finish("2026-02-01", "partial");
    expect(await a.partialDays("2026-02-15")).toEqual(["2026-03-01", "2026-03-03"]);
    const latest = await a.latestRuns(2);
    expect(latest.map((r) => JSON.parse(r.digest).day)).toEqual(["2026-02-01", "2026-03-03"]);
    expect(latest[0]).toMatchObject({ status: "partial", id: expect.any(Number) });
  });
});

// What the steps read and write, on the engine: seeded through plain SQL both engines speak.

const START = Date.parse(`${DAY}T00:00:00Z`);
const END = START + 86_400_000;
const HOUR = 3_600_000;

interface Seed {
  id: string;
  project?: string | null;
  type?: string;
  at?: number;
  updated?: number;
  session?: string | null;
  strength?: number;
  refreshed?: number;
  shown?: number;
  used?: number;
}

async function seed(s: TestServices, m: Seed): Promise<number> {
  const at = m.at ?? START + HOUR;
  await dbRows(
    s,
    `INSERT INTO memories(id, content, memory_type, project, source_session, created_at, updated_at, refreshed_at, strength, shown_count, used_count)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      m.id,
      `content of ${m.id}`,
      m.type ?? "knowledge",
      m.project === undefined ? "shop" : m.project,
      m.session ?? null,
      at,
      m.updated ?? at,
      m.refreshed ?? at,
      m.strength ?? 1,
      m.shown ?? 0,
      m.used ?? 0,
    ],
  );
  return (await dbRows<{ seq: number }>(s, "SELECT seq FROM memories WHERE id = ?", [m.id]))[0].seq;
}

/** A unit vector leaning towards axis `axis` (tilt 0: exactly the axis). */
function unit(axis: number, tilt = 0): Float32Array {
  const v = new Float32Array(DIMENSIONS);
  v[axis] = 1;
  v[(axis + 1) % DIMENSIONS] = tilt;
  const n = Math.hypot(1, tilt);
  return v.map((x) => x / n);
}

async function seedVector(s: TestServices, seq: number, v: Float32Array): Promise<void> {
  if (onPostgres) await dbRows(s, "INSERT INTO memory_vec(seq, embedding) VALUES (?, CAST(? AS vector))", [seq, `[${Array.from(v).join(",")}]`]);
  else await dbRows(s, "INSERT INTO memory_vec(rowid, embedding) VALUES (?, ?)", [BigInt(seq), v]);
}

function one(): [TestServices, NightlyStore] {
  const s = makeServices();
  open.push(s);
  return [s, s.storage.nightly];
}

describe("nightly store: the steps' reads and writes", () => {
  test("learn reads the day's memories, learnings excluded, in (project, seq) order after the cursor", async () => {
    const [s, store] = one();
    await seed(s, { id: "b1", project: "b" });
    await seed(s, { id: "none1", project: null });
    await seed(s, { id: "a1", project: "a" });
    await seed(s, { id: "b2", project: "b", at: START - 5 * 86_400_000, updated: START + 2 * HOUR });
    await seed(s, { id: "old", project: "a", at: START - 86_400_000 });
    await seed(s, { id: "lesson", project: "a", type: "learnings" });
    await seed(s, { id: "next-day", project: "a", at: END });
    expect(await store.countDay(START, END, ["", 0])).toBe(4);
    const rows = await store.dayRows(START, END, ["", 0], 10);
    expect(rows.map((r) => [r.pkey, r.id])).toEqual([
      ["", "none1"],
      ["a", "a1"],
      ["b", "b1"],
      ["b", "b2"],
    ]);
    // Taken first: bun's toMatchObject writes its asymmetric matchers into the object it checks.
    const after: [string, number] = [rows[1].pkey, rows[1].seq];
    expect(typeof after[1]).toBe("number");
    expect(rows[1]).toMatchObject({ memoryType: "knowledge", project: "a", content: "content of a1", createdAt: START + HOUR });
    expect(await store.countDay(START, END, after)).toBe(2);
    expect((await store.dayRows(START, END, after, 1)).map((r) => r.id)).toEqual(["b1"]);
  });

  test("merge reads candidates, rows by seq, stored vectors and (where the engine searches) neighbours in the project", async () => {
    const [s, store] = one();
    const x = await seed(s, { id: "x", used: 2, strength: 1.5 });
    const y = await seed(s, { id: "y", session: "nightly:2026-03-10", at: START - 3 * 86_400_000 });
    const z = await seed(s, { id: "z", project: "other" });
    await seed(s, { id: "far", at: START - 3 * 86_400_000 });
    await seedVector(s, x, unit(0));
    await seedVector(s, y, unit(0, 0.1));
    await seedVector(s, z, unit(0));
    const candidates = await store.mergeCandidates(START, END, "nightly:2026-03-10", 0, 10);
    expect(candidates.map((r) => r.id)).toEqual(["x", "y", "z"]);
    expect(candidates[0]).toEqual({
      seq: x,
      id: "x",
      memoryType: "knowledge",
      project: "shop",
      strength: 1.5,
      refreshedAt: START + HOUR,
      usedCount: 2,
      linkCount: 0,
    });
    expect((await store.mergeCandidates(START, END, "nightly:2026-03-10", x, 10)).map((r) => r.id)).toEqual(["y", "z"]);
    expect((await store.mergeRowsBySeq([z, x])).map((r) => r.id).sort()).toEqual(["x", "z"]);
    expect(await store.mergeRowsBySeq([])).toEqual([]);
    const v = (await store.vectorOf(y))!;
    expect(v).toBeInstanceOf(Float32Array);
    expect(v.length).toBe(DIMENSIONS);
    expect(v[0]).toBeCloseTo(unit(0, 0.1)[0], 5);
    expect(await store.vectorOf(999_999)).toBeNull();
    if (onPostgres) {
      const near = await store.nearest!(x, 4, "shop");
      expect(near.map((h) => h.seq)).toEqual([x, y]);
      expect(near[1].similarity).toBeCloseTo(1 / Math.hypot(1, 0.1), 4);
    } else {
      // SQLite: the server's in-memory index answers.
      expect(store.nearest).toBeUndefined();
    }
  });

  test("a fold moves counters, links, tags, events and recall suppression to the survivor", async () => {
    const [s, store] = one();
    await seed(s, { id: "keep", shown: 2, used: 1, strength: 1.2, refreshed: START });
    await seed(s, { id: "drop", shown: 3, used: 4, strength: 1.9, refreshed: START + HOUR, at: START - HOUR });
    await seed(s, { id: "third" });
    await seed(s, { id: "fourth" });
    const link = (from: string, to: string, w: number) =>
      dbRows(s, "INSERT INTO links(from_id, to_id, relationship, weight, created_at) VALUES (?, ?, 'related', ?, 1)", [from, to, w]);
    await link("keep", "third", 0.3);
    await link("drop", "third", 0.8);
    await link("fourth", "drop", 0.6);
    await link("drop", "keep", 0.9);
    const tag = (id: string, t: string, w: number) => dbRows(s, "INSERT INTO memory_tags(memory_id, tag, weight) VALUES (?, ?, ?)", [id, t, w]);
    await tag("keep", "shop", 0.4);
    await tag("drop", "shop", 0.7);
    await tag("drop", "deploy", 0.5);
    await dbRows(s, "INSERT INTO memory_events(memory_id, kind, at) VALUES ('drop', 'used', 5)");
    await dbRows(s, "INSERT INTO recall_sessions(session_id, turn, updated_at) VALUES ('s1', 1, 1), ('s2', 1, 1)");
    await dbRows(s, "INSERT INTO recall_shown(session_id, memory_id, turn) VALUES ('s1', 'keep', 1), ('s1', 'drop', 1), ('s2', 'drop', 1)");

    await store.foldInto("keep", "drop", 1.5);
    await dbRows(s, "DELETE FROM memories WHERE id = 'drop'");

    const [keep] = await dbRows(s, "SELECT shown_count, used_count, strength, refreshed_at, created_at, link_count FROM memories WHERE id = 'keep'");
    expect(keep).toEqual({ shown_count: 5, used_count: 5, strength: 1.5, refreshed_at: START + HOUR, created_at: START - HOUR, link_count: 2 });
    expect(await dbRows(s, "SELECT from_id, to_id, weight FROM links ORDER BY from_id, to_id")).toEqual([
      { from_id: "fourth", to_id: "keep", weight: 0.6 },
      { from_id: "keep", to_id: "third", weight: 0.8 },
    ]);
    expect(await dbRows(s, "SELECT tag, weight FROM memory_tags WHERE memory_id = 'keep' ORDER BY tag")).toEqual([
      { tag: "deploy", weight: 0.5 },
      { tag: "shop", weight: 0.7 },
    ]);
    expect(await dbRows(s, "SELECT memory_id FROM memory_events")).toEqual([{ memory_id: "keep" }]);
    expect(await dbRows(s, "SELECT session_id, memory_id FROM recall_shown ORDER BY session_id, memory_id")).toEqual([
      { session_id: "s1", memory_id: "drop" },
      { session_id: "s1", memory_id: "keep" },
      { session_id: "s2", memory_id: "keep" },
    ]);
  });

  test("decay weakens what was shown on the day and not used since, never below the floor; a dry run only counts", async () => {
    const [s, store] = one();
    await seed(s, { id: "ignored", shown: 4 });
    await seed(s, { id: "used-later", shown: 4 });
    await seed(s, { id: "rare", shown: 1 });
    await seed(s, { id: "floor", shown: 5, strength: 0.22 });
    await seed(s, { id: "other-day", shown: 5 });
    const event = (id: string, kind: string, at: number) => dbRows(s, "INSERT INTO memory_events(memory_id, kind, at) VALUES (?, ?, ?)", [id, kind, at]);
    for (const id of ["ignored", "used-later", "rare", "floor"]) await event(id, "shown", START + HOUR);
    await event("used-later", "used", END + HOUR);
    await event("other-day", "shown", START - HOUR);
    const p = { minShown: 3, floor: 0.2, factor: 0.9, start: START, end: END };
    expect(await store.decayIgnored(p, true)).toBe(2);
    expect(await store.decayIgnored(p, false)).toBe(2);
    const strengths = Object.fromEntries(
      (await dbRows<{ id: string; strength: number }>(s, "SELECT id, strength FROM memories")).map((r) => [r.id, r.strength]),
    );
    expect(strengths.ignored).toBeCloseTo(0.9, 9);
    expect(strengths.floor).toBeCloseTo(0.2, 9);
    expect([strengths["used-later"], strengths.rare, strengths["other-day"]]).toEqual([1, 1, 1]);
  });

  test("prune candidates: old, never used, faded, not learnings, weakest first", async () => {
    const [s, store] = one();
    const now = START + 400 * 86_400_000;
    const old = START;
    await seed(s, { id: "faded", strength: 0.5, at: old, refreshed: old });
    await seed(s, { id: "fainter", strength: 0.3, at: old, refreshed: old });
    await seed(s, { id: "used", strength: 0.3, used: 1, at: old, refreshed: old });
    await seed(s, { id: "lesson", strength: 0.3, type: "learnings", at: old, refreshed: old });
    await seed(s, { id: "young", strength: 0.3, at: now - 86_400_000, refreshed: old });
    await seed(s, { id: "strong", strength: 2, at: old, refreshed: now });
    const found = await store.pruneCandidates({ now, before: now - 30 * 86_400_000, floor: 0.1, limit: 10, exclude: [] });
    expect(found.map((r) => r.id)).toEqual(["fainter", "faded"]);
    expect(found[0].seq).toEqual(expect.any(Number));
    expect((await store.pruneCandidates({ now, before: now - 30 * 86_400_000, floor: 0.1, limit: 1, exclude: [] })).map((r) => r.id)).toEqual(["fainter"]);
    // What feedback holds back (core names the ids) is never a candidate, however faded.
    expect((await store.pruneCandidates({ now, before: now - 30 * 86_400_000, floor: 0.1, limit: 1, exclude: ["fainter", "nope"] })).map((r) => r.id)).toEqual([
      "faded",
    ]);
  });

  test("dropped fragments are listed oldest first and forgotten up to the last reported", async () => {
    const [s, store] = one();
    for (const r of ["filler", "noise", "filler"]) await dbRows(s, "INSERT INTO distill_dropped(at, reason, content) VALUES (1, ?, ?)", [r, `about ${r}`]);
    const rows = await store.droppedFragments();
    expect(rows.map((r) => r.reason)).toEqual(["filler", "noise", "filler"]);
    await store.forgetDroppedFragments(rows[1].id);
    expect((await store.droppedFragments()).map((r) => r.id)).toEqual([rows[2].id]);
  });

  test("learnings: recent ones strongest first (a project's plus the global ones), their sources, and the memory index counts", async () => {
    const [s, store] = one();
    const now = END;
    await seed(s, { id: "l-strong", type: "learnings", strength: 1.8 });
    await seed(s, { id: "l-weak", type: "learnings", strength: 0.6 });
    await seed(s, { id: "l-global", type: "learnings", project: null, strength: 1.2 });
    await seed(s, { id: "l-other", type: "learnings", project: "other", strength: 2 });
    await seed(s, { id: "l-old", type: "learnings", at: START - 60 * 86_400_000 });
    await seed(s, { id: "fact" });
    await dbRows(
      s,
      "INSERT INTO links(from_id, to_id, relationship, weight, created_at) VALUES ('l-strong', 'fact', 'derived_from', 1, 1), ('l-strong', 'l-old', 'related', 1, 1)",
    );
    await dbRows(s, "INSERT INTO memory_tags(memory_id, tag, weight) VALUES ('fact', 'deploy', 1), ('l-strong', 'deploy', 1), ('l-weak', 'shop', 1)");
    const shop = await store.recentLearnings({ now, since: START - 86_400_000, project: "shop", limit: 10 });
    expect(shop.map((r) => r.id)).toEqual(["l-strong", "l-global", "l-weak"]);
    expect(shop[0]).toMatchObject({ memoryType: "learnings", project: "shop", strength: 1.8, createdAt: START + HOUR, linkCount: 2 });
    expect((await store.recentLearnings({ now, since: START - 86_400_000, project: null, limit: 2 })).map((r) => r.id)).toEqual(["l-other", "l-strong"]);
    expect(await store.derivedFrom(["l-strong", "l-weak"])).toEqual([{ fromId: "l-strong", toId: "fact" }]);
    expect(await store.derivedFrom([])).toEqual([]);
    const counts = await store.indexCounts(2);
    expect(counts.byType.sort((a, b) => a.memoryType.localeCompare(b.memoryType))).toEqual([
      { memoryType: "knowledge", n: 1 },
      { memoryType: "learnings", n: 5 },
    ]);
    expect(counts.projects).toEqual([{ project: "shop", memories: 4, learnings: 3 }, expect.objectContaining({ memories: 1 })]);
    expect(counts.domains).toEqual([
      { domain: "deploy", memories: 2 },
      { domain: "shop", memories: 1 },
    ]);
  });
});
