// Recall-index state on PostgreSQL, through two storage handles over one
// database: each handle has its own connection pool, as two memsvc servers
// would (the database cannot tell them from two processes). The rules of the
// issue: suppression is shared across servers, and two prompts of one session
// answered at once by two servers get distinct turns and never list one memory twice.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Storage } from "../../../../src/core/storage";
import { openPostgres, type PgHandle } from "../../../../src/store/postgres/open";
import { pgStorage } from "../../../../src/store/postgres/storage";
import { sharedPgUrl } from "../../../helpers/pg-server";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 0, 10);
const expiry = (now: number, max = 100) => ({ idleBefore: now - 14 * DAY, oneTurnIdleBefore: now - DAY, max });

let url = "";
const open: Storage[] = [];
beforeAll(async () => {
  url = await sharedPgUrl();
  // A PGlite start can pass bun's 5 s hook default on a loaded 2-core machine.
}, 60_000);
afterAll(async () => {
  while (open.length) await open.pop()!.close();
});

let schemas = 0;
/** Two "servers" over one fresh schema of the one database. */
async function twoServers(): Promise<[Storage, Storage]> {
  const schema = `recall_${process.pid}_${++schemas}`;
  const a = pgStorage(openPostgres({ url, schema, pool: 4 }));
  const b = pgStorage(openPostgres({ url, schema, pool: 4 }));
  open.push(a, b);
  await a.ready();
  await b.ready();
  return [a, b];
}

/** A third handle on the same schema, for what the test itself reads and seeds. */
async function direct(): Promise<PgHandle> {
  const h = openPostgres({ url, schema: `recall_${process.pid}_${schemas}`, pool: 2 });
  await h.ready();
  return h;
}

describe("recall state over one PostgreSQL database, two servers", () => {
  test("concurrent prompts of one session through both servers get distinct turns 1..n", async () => {
    const [a, b] = await twoServers();
    const end = { sessionId: "s", now: NOW, expiry: expiry(NOW), window: 30, topic: "{}", picks: [] };
    const turns = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).recall.finishTurn(end).then((t) => t.turn)));
    expect(turns.sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const short = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).recall.nextTurn("s", NOW, expiry(NOW))));
    expect(short.sort((x, y) => x - y)).toEqual([21, 22, 23, 24, 25, 26]);
  });

  test("a memory shown through server A is suppressed through server B for the window, then shown again", async () => {
    const [a, b] = await twoServers();
    const end = (picks: string[], topic = "{}") => ({ sessionId: "s", now: NOW, expiry: expiry(NOW), window: 3, topic, picks });
    expect(await a.recall.peekTurn("s", 3)).toEqual({ turn: 1, suppressed: [], topic: null });
    expect(await a.recall.finishTurn(end(["m1"], '{"t":1}'))).toEqual({ turn: 1, claimed: ["m1"] });
    expect(await b.recall.peekTurn("s", 3)).toEqual({ turn: 2, suppressed: ["m1"], topic: '{"t":1}' });
    // B would list it anyway (a stale read): the claim refuses.
    expect(await b.recall.finishTurn(end(["m1", "m2"]))).toEqual({ turn: 2, claimed: ["m2"] });
    expect((await a.recall.peekTurn("s", 3)).suppressed.sort()).toEqual(["m1", "m2"]);
    expect(await a.recall.finishTurn(end([]))).toEqual({ turn: 3, claimed: [] });
    expect(await b.recall.peekTurn("s", 3)).toMatchObject({ turn: 4, suppressed: ["m2"] });
    expect(await b.recall.finishTurn(end(["m1"]))).toEqual({ turn: 4, claimed: ["m1"] });
    // Another session is not affected.
    expect((await b.recall.peekTurn("other", 3)).suppressed).toEqual([]);
  });

  test("two turns finishing at once on two servers claim each memory once", async () => {
    const [a, b] = await twoServers();
    for (let round = 0; round < 5; round++) {
      const picks = [`x${round}`, `y${round}`];
      const [ca, cb] = await Promise.all([
        a.recall.finishTurn({ sessionId: "s", now: NOW, expiry: expiry(NOW), window: 30, topic: "{}", picks }),
        b.recall.finishTurn({ sessionId: "s", now: NOW, expiry: expiry(NOW), window: 30, topic: "{}", picks: [...picks].reverse() }),
      ]);
      expect([...ca.claimed, ...cb.claimed].sort()).toEqual(picks);
      expect([ca.turn, cb.turn].sort((x, y) => x - y)).toEqual([2 * round + 1, 2 * round + 2]);
    }
  });

  test("showing moves the memory's counters and decay clock and records a shown event, only for claimed picks", async () => {
    const [a, b] = await twoServers();
    const h = await direct();
    try {
      await h.orm.insert(h.t.memories).values(
        ["m1", "m2"].map((id, i) => ({
          seq: i + 1,
          id,
          content: `memory ${id}`,
          memoryType: "experience",
          project: "p",
          createdAt: NOW - 20 * DAY,
          updatedAt: NOW - 20 * DAY,
          refreshedAt: NOW - 20 * DAY,
        })),
      );
      await a.recall.finishTurn({ sessionId: "s", now: NOW, expiry: expiry(NOW), window: 30, topic: "{}", picks: ["m1"] });
      expect(await b.recall.finishTurn({ sessionId: "s", now: NOW + 5, expiry: expiry(NOW), window: 30, topic: "{}", picks: ["m1", "m2"] })).toEqual({
        turn: 2,
        claimed: ["m2"],
      });
      const rows = await a.recall.candidateRows([1, 2, 99]);
      expect(rows.sort((x, y) => x.seq - y.seq)).toEqual([
        { seq: 1, id: "m1", content: "memory m1", memoryType: "experience", project: "p", createdAt: NOW - 20 * DAY, strength: 1, refreshedAt: NOW },
        { seq: 2, id: "m2", content: "memory m2", memoryType: "experience", project: "p", createdAt: NOW - 20 * DAY, strength: 1, refreshedAt: NOW + 5 },
      ]);
      const counts = await h.sql.unsafe(`SELECT id, shown_count, last_shown_at FROM ${h.schema}.memories ORDER BY id`);
      expect(counts.map((r: Record<string, unknown>) => [r.id, Number(r.shown_count), Number(r.last_shown_at)])).toEqual([
        ["m1", 1, NOW],
        ["m2", 1, NOW + 5],
      ]);
      const events = await h.sql.unsafe(`SELECT memory_id, kind FROM ${h.schema}.memory_events ORDER BY memory_id`);
      expect(events.map((r: Record<string, unknown>) => `${r.memory_id}:${r.kind}`)).toEqual(["m1:shown", "m2:shown"]);
      expect(await a.recall.candidateRows([])).toEqual([]);
    } finally {
      await h.close();
    }
  });

  test("reset forgets turns, shown rows and topic on every server; hasTopic follows", async () => {
    const [a, b] = await twoServers();
    expect(await b.recall.hasTopic("s")).toBe(false);
    await a.recall.finishTurn({ sessionId: "s", now: NOW, expiry: expiry(NOW), window: 30, topic: '{"k":1}', picks: ["m1"] });
    expect(await b.recall.hasTopic("s")).toBe(true);
    await b.recall.resetSession("s");
    expect(await a.recall.hasTopic("s")).toBe(false);
    expect(await a.recall.peekTurn("s", 30)).toEqual({ turn: 1, suppressed: [], topic: null });
  });

  test("expiry: one-prompt sessions after a day, others after 14 days, least recently used past the cap", async () => {
    const [a, b] = await twoServers();
    let now = NOW;
    await a.recall.nextTurn("one-off", now, expiry(now));
    await a.recall.nextTurn("conversation", now, expiry(now));
    await b.recall.nextTurn("conversation", now, expiry(now));
    now += DAY + 1;
    await b.recall.nextTurn("next-day", now, expiry(now)); // a new session expires old ones
    const h = await direct();
    const sessions = async () =>
      (await h.sql.unsafe(`SELECT session_id FROM ${h.schema}.recall_sessions ORDER BY session_id`)).map((r: { session_id: string }) => r.session_id);
    try {
      expect(await sessions()).toEqual(["conversation", "next-day"]);
      now += 15 * DAY;
      for (const id of ["c", "d", "e", "f"]) {
        await a.recall.nextTurn(id, now, expiry(now, 1000));
        await a.recall.nextTurn(id, now, expiry(now, 1000));
        now += 1000;
      }
      expect(await sessions()).toEqual(["c", "d", "e", "f"]);
      expect(await b.recall.expireSessions(expiry(now, 2), true)).toBe(2);
      expect(await sessions()).toHaveLength(4);
      expect(await b.recall.expireSessions(expiry(now, 2), false)).toBe(2);
      expect(await sessions()).toEqual(["e", "f"]);
    } finally {
      await h.close();
    }
  });
});
