import { afterEach, describe, expect, test } from "bun:test";
import { recallIndex } from "../../src/core/recall";
import { expireRecallSessions } from "../../src/core/recall";
import { RECALL_ONE_TURN_SESSION_TTL_DAYS, RECALL_SESSION_TTL_DAYS, RECALL_SESSIONS_MAX } from "../../src/core/tuning";
import { makeServices, type TestServices } from "../helpers/services";

const DAY = 86_400_000;
const open: TestServices[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

function setup() {
  const clock = { t: Date.UTC(2026, 0, 10) };
  const s = makeServices({ now: () => clock.t });
  open.push(s);
  const sessions = () =>
    s.store.sqlite
      .query<{ session_id: string }, []>("SELECT session_id FROM recall_sessions ORDER BY session_id")
      .all()
      .map((r) => r.session_id);
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
    expect(sessions()).toEqual(["conversation", "next-day"]);
    clock.t += 13 * DAY;
    await prompt("conversation"); // still within 14 days of its last prompt: kept and touched
    clock.t += 14 * DAY + 1;
    await prompt("later");
    expect(sessions()).toEqual(["later"]);
  });

  test("past the cap the least recently used sessions go, with their shown-memory rows", async () => {
    const { s, clock, sessions, prompt } = setup();
    for (const id of ["a", "b", "c", "d", "e"]) {
      await prompt(id);
      await prompt(id);
      clock.t += 1000;
    }
    await prompt("a"); // a is now the most recent
    s.store.sqlite.run("INSERT INTO recall_shown(session_id, memory_id, turn) VALUES ('b', 'm1', 1), ('a', 'm2', 1)");
    expect(expireRecallSessions(s, { max: 3, dryRun: true })).toBe(2);
    expect(sessions()).toHaveLength(5);
    expect(expireRecallSessions(s, { max: 3 })).toBe(2);
    expect(sessions()).toEqual(["a", "d", "e"]);
    const shown = s.store.sqlite.query<{ session_id: string }, []>("SELECT session_id FROM recall_shown").all();
    expect(shown).toEqual([{ session_id: "a" }]);
  });

});
