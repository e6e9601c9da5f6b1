import { afterEach, describe, expect, test } from "bun:test";
import { recallIndex } from "../../../../src/core/recall";
import { expireRecallSessions } from "../../../../src/core/recall";
import { RECALL_ONE_TURN_SESSION_TTL_DAYS, RECALL_SESSION_TTL_DAYS, RECALL_SESSIONS_MAX } from "../../../../src/core/recall/tuning";
import { dbRows } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

const DAY = 86_400_000;
const open: TestServices[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

function setup() {
  const clock = { t: Date.UTC(2026, 0, 10) };
  const s = makeServices({ now: () => clock.t });
  open.push(s);
  const sessions = async () => (await dbRows<{ session_id: string }>(s, "SELECT session_id FROM recall_sessions ORDER BY session_id")).map((r) => r.session_id);
  // "ok" is a short prompt: it still counts as a turn of its session, without an embedding.
  const prompt = (session_id: string) => recallIndex(s, { session_id, prompt: "ok" });
  return { s, clock, sessions, prompt };
}

describe("recall session state stays bounded", () => {
  test("documented defaults", () => {
    expect([RECALL_ONE_TURN_SESSION_TTL_DAYS, RECALL_SESSION_TTL_DAYS, RECALL_SESSIONS_MAX]).toEqual([1, 14, 10_000]);
  });

  test("a one-prompt session is dropped a day after it went idle, a conversation after 14 days, when a new session starts", async () => {
    const { clock, sessions, prompt } = setup();
    await prompt("one-off");
    await prompt("conversation");
    await prompt("conversation");
    clock.t += DAY + 1;
    await prompt("next-day");
    expect(await sessions()).toEqual(["conversation", "next-day"]);
    clock.t += 13 * DAY;
    await prompt("conversation"); // still within 14 days of its last prompt: kept and touched
    clock.t += 14 * DAY + 1;
    await prompt("later");
    expect(await sessions()).toEqual(["later"]);
  });

  test("past the cap the least recently used sessions go, with their shown-memory rows", async () => {
    const { s, clock, sessions, prompt } = setup();
    for (const id of ["a", "b", "c", "d", "e"]) {
      await prompt(id);
      await prompt(id);
      clock.t += 1000;
    }
    await prompt("a"); // a is now the most recent
    await dbRows(s, "INSERT INTO recall_shown(session_id, memory_id, turn) VALUES ('b', 'm1', 1), ('a', 'm2', 1)");
    expect(await expireRecallSessions(s, { max: 3, dryRun: true })).toBe(2);
    expect(await sessions()).toHaveLength(5);
    expect(await expireRecallSessions(s, { max: 3 })).toBe(2);
    expect(await sessions()).toEqual(["a", "d", "e"]);
    const shown = await dbRows<{ session_id: string }>(s, "SELECT session_id FROM recall_shown");
    expect(shown).toEqual([{ session_id: "a" }]);
  });
});

describe("concurrent prompts of one session (several servers over one database)", () => {
  const expiry = (now: number) => ({ idleBefore: now - 14 * DAY, oneTurnIdleBefore: now - DAY, max: 100 });

  test("two prompts of a session at once: each gets its own turn, and a memory one claimed is not claimed by the other", async () => {
    const { s, clock } = setup();
    const rs = s.storage.recall;
    const a = await rs.peekTurn("s", 30);
    const b = await rs.peekTurn("s", 30);
    // Both read the state before either finished: the same next turn, neither sees the other's picks.
    expect([a, b]).toEqual([
      { turn: 1, suppressed: [], topic: null },
      { turn: 1, suppressed: [], topic: null },
    ]);
    const end = (picks: string[]) => rs.finishTurn({ sessionId: "s", now: clock.t, expiry: expiry(clock.t), window: 30, topic: "{}", picks });
    expect(await end(["m1", "m2"])).toEqual({ turn: 1, claimed: ["m1", "m2"] });
    expect(await end(["m3", "m2", "m1"])).toEqual({ turn: 2, claimed: ["m3"] });
    const c = await rs.peekTurn("s", 30);
    expect([c.turn, [...c.suppressed].sort(), c.topic]).toEqual([3, ["m1", "m2", "m3"], "{}"]);
    // Peeking writes nothing: the turn is counted once, when the prompt ends.
    expect((await rs.peekTurn("s", 30)).turn).toBe(3);
  });

  test("past the window a memory is claimed again", async () => {
    const { s, clock } = setup();
    const rs = s.storage.recall;
    const end = (picks: string[]) => rs.finishTurn({ sessionId: "s", now: clock.t, expiry: expiry(clock.t), window: 2, topic: "{}", picks });
    expect(await end(["m1"])).toEqual({ turn: 1, claimed: ["m1"] });
    expect(await rs.peekTurn("s", 2)).toEqual({ turn: 2, suppressed: ["m1"], topic: "{}" });
    // Turn 2 lists it anyway (a stale read): the claim refuses.
    expect(await end(["m1"])).toEqual({ turn: 2, claimed: [] });
    expect(await rs.peekTurn("s", 2)).toMatchObject({ turn: 3, suppressed: [] });
    expect(await end(["m1"])).toEqual({ turn: 3, claimed: ["m1"] });
  });
});
