import { afterEach, describe, expect, test } from "bun:test";
import type { NightlyStore } from "../../src/core/nightly";
import { makeServices, type TestServices } from "../helpers/services";

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

const start = (store: NightlyStore, owner: string, afterId = 0, day = DAY) => store.startRun({ day, forced: false, owner, now: 1000, digest: `{"by":"${owner}"}`, afterId });

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
    const next = (owner: string) => ({ owner, now: 5000, forced: false, startedAt: seen.startedAt, cursor: `{"merge":${owner.length}}`, digest: `{"by":"${owner}"}` });
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
