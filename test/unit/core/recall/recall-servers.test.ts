// Two servers over one store: two Services built on the same home (one SQLite
// file; with MEMSVC_TEST_ENGINE=postgres one schema of the test database),
// each with its own connection, write lock and caches, as two memsvc
// processes would have. Recall-index suppression is shared between them, and
// two prompts of one session answered by both at once get distinct turns and
// list a memory once. (Over PostgreSQL the same rules are proven at the store
// level by recall-postgres.test.ts.)
import { afterEach, describe, expect, test } from "bun:test";
import { ingestMemory } from "../../../../src/core/ingest";
import { recallIndex } from "../../../../src/core/recall";
import { makeServices, type TestServices } from "../../../helpers/services";

const open: TestServices[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

const POSTGRES = "which port does the staging postgres database listen on?";

/** Server A seeds the store, then B starts on it (B's vector index loads what A wrote). */
async function twoServers(): Promise<{ a: TestServices; b: TestServices; pg: string }> {
  const a = makeServices();
  open.push(a);
  const r = await ingestMemory(a, {
    content: "The staging Postgres database listens on port 5433 behind pgbouncer; connect with psql -p 5433.",
    project: "infra",
  });
  await ingestMemory(a, { content: "The React frontend is built with Vite into dist/ and served by the nginx container.", project: "web" });
  const b = makeServices({ home: a.config.home });
  open.push(b);
  return { a, b, pg: r.id! };
}

describe("recall-index over two servers on one store", () => {
  test("a memory shown through server A is suppressed through server B; a reset through B shows it again through A", async () => {
    const { a, b, pg } = await twoServers();
    expect(await recallIndex(a, { session_id: "s1", prompt: POSTGRES, project: "infra" })).toMatchObject({ shown: [pg], turn: 1 });
    expect(await recallIndex(b, { session_id: "s1", prompt: POSTGRES, project: "infra" })).toEqual({ block: null, shown: [], turn: 2 });
    // B sees the memory for another session.
    expect(await recallIndex(b, { session_id: "s2", prompt: POSTGRES, project: "infra" })).toMatchObject({ shown: [pg], turn: 1 });
    expect(await recallIndex(b, { session_id: "s1", reset: true })).toEqual({ ok: true, reset: true });
    expect(await recallIndex(a, { session_id: "s1", prompt: POSTGRES, project: "infra" })).toMatchObject({ shown: [pg], turn: 1 });
  });

  test("prompts of one session answered by both servers at once get distinct turns and list the memory once", async () => {
    const { a, b, pg } = await twoServers();
    const out = (await Promise.all([a, b, a, b].map((s) => recallIndex(s, { session_id: "s", prompt: POSTGRES, project: "infra" })))) as {
      shown: string[];
      turn: number;
    }[];
    expect(out.map((r) => r.turn).sort()).toEqual([1, 2, 3, 4]);
    expect(out.flatMap((r) => r.shown)).toEqual([pg]);
    // Short prompts count on either server too.
    await Promise.all([a, b].map((s) => recallIndex(s, { session_id: "s", prompt: "ok" })));
    expect(await recallIndex(a, { session_id: "s", prompt: POSTGRES, project: "infra" })).toEqual({ block: null, shown: [], turn: 7 });
  });
});
