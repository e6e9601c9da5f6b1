import { afterEach, expect, test } from "bun:test";
import { ReembedQueue } from "../../../../src/core/embedder-startup";
import { ingestMemory } from "../../../../src/core/ingest";
import { calibrationDue } from "../../../../src/core/search";
import { CALIBRATION_MIN_MEMORIES } from "../../../../src/core/search/calibration-tuning";
import { dbRows, onSqlite } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

const open: TestServices[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

const TOPICS = [
  "payments webhook retries",
  "terraform state locking",
  "postgres vacuum settings",
  "react hydration errors",
  "kafka consumer lag",
  "jwt key rotation",
];

test("a store whose index loads in the background is calibrated at start once the index is ready", async () => {
  const first = makeServices({ indexBackgroundAbove: 1_000_000 });
  open.push(first);
  const n = CALIBRATION_MIN_MEMORIES + 40;
  for (let i = 0; i < n; i++) {
    const topic = TOPICS[i % TOPICS.length];
    await ingestMemory(first, {
      content: `Note ${i} on ${topic}: case ${i * 7919} was fixed by step ${i % 13} after checking ${topic.split(" ")[0]} logs on host-${i % 17}.`,
      project: `p${i % 3}`,
    });
  }
  expect((await dbRows(first, "SELECT count(*) AS n FROM embedder_calibration"))[0]).toMatchObject({ n: 0 });
  const home = first.config.home;
  await first.close();
  open.pop();

  // Reopened as a server would be with a large store: the index loads after start returns.
  const s = makeServices({ home, indexBackgroundAbove: 20 });
  open.push(s);
  if (onSqlite) expect(s.indexState.status).toBe("loading");
  const abort = new AbortController();
  await new ReembedQueue(s, abort.signal).schedule();
  const rows = await dbRows<{ memories: number }>(s, "SELECT memories FROM embedder_calibration");
  expect(rows.length).toBe(1);
  expect(Number(rows[0].memories)).toBe(n);
  expect(await calibrationDue(s)).toBe(false);
}, 120_000);
