import { afterEach, expect, test } from "bun:test";
import { ingestMemory } from "../../../../src/core/ingest";
import { reviewMemory } from "../../../../src/core/memories";
import { runNightly } from "../../../../src/core/nightly";
import { feedbackFromAnywhere } from "../../../../src/core/receipts";
import { dbRows } from "../../../helpers/engine";
import { useFakeLlm } from "../../../helpers/fake-llm";
import { makeServices, type TestServices } from "../../../helpers/services";

// The nightly run reads feedback: a memory marked wrong or outdated (not yet
// reviewed) or retired is left alone: not sent to the model, not merged with
// its near-duplicate, not pruned when it fades. Unmarked ones are consolidated
// as before, in the same run.
const DAY = "2026-03-10";
const clock = Date.parse("2026-03-11T03:30:00Z");
const fake = useFakeLlm();
const open: TestServices[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function add(s: TestServices, content: string, project = "shop", date = DAY): Promise<string> {
  const r = await ingestMemory(s, { content, project, session_date: date });
  if (r.id === null) throw new Error("not stored");
  return r.id;
}
const mark = (s: TestServices, id: string, kind: "wrong" | "outdated") => feedbackFromAnywhere(s, { id, kind, note: "test" }, "test");
const retire = (s: TestServices, id: string) => reviewMemory(s, { id, action: "retire" }, "test");

test("feedback holds memories back from the nightly run's learnings, merges and pruning; the rest is consolidated", async () => {
  const s = makeServices({ now: () => clock, config: { llm: { baseURL: fake.baseURL, model: "fake-model", timeoutMs: 5000 }, nightly: { enabled: true } } });
  open.push(s);
  const good = await add(s, "The deploy failed because the migration locked the orders table for 4 minutes.");
  const wrongDay = await add(s, "Deploys must only run on Fridays after 6pm to avoid the traffic peak.");
  const retiredDay = await add(s, "The old Jenkins server builds the mobile app every night.");
  const opsWrong = await add(s, "The ops pager rotates every Monday at 9am sharp.", "ops");
  // Near-duplicate pairs: A's second copy is reported outdated, B is unmarked.
  const a1 = await add(s, "The staging database listens on port 5433 behind pgbouncer.");
  const a2 = await add(s, "The staging database listens on port 5433 behind pgbouncer!");
  const b1 = await add(s, "Redis cache keys in production expire after 24 hours by default.");
  const b2 = await add(s, "Redis cache keys in production expire after 24 hours by default!");
  // a2 would win the merge (used, stronger): held back, it neither absorbs a1 nor lends it its strength.
  await dbRows(s, "UPDATE memories SET used_count = 3, strength = 1.8 WHERE id = ?", [a2]);
  await dbRows(s, "UPDATE memories SET used_count = 1 WHERE id = ?", [b2]);
  // Faded for good: old, never used, weak.
  const old = Date.parse("2025-06-01T00:00:00Z");
  const faded = await add(s, "A vendor demo note nobody ever looked at again.", "shop", "2025-06-01");
  const fadedWrong = await add(s, "The VPN endpoint is vpn.example.com on port 1194.", "shop", "2025-06-01");
  const fadedRetired = await add(s, "The intranet wiki moved to Confluence in 2019.", "shop", "2025-06-01");
  await dbRows(s, "UPDATE memories SET strength = 0.2, refreshed_at = ? WHERE id IN (?, ?, ?)", [old, faded, fadedWrong, fadedRetired]);

  for (const id of [wrongDay, opsWrong, fadedWrong]) await mark(s, id, "wrong");
  await mark(s, a2, "outdated");
  for (const id of [retiredDay, fadedRetired]) await retire(s, id);
  const a1Before = (
    await dbRows<{ strength: number; refreshed_at: number; used_count: number }>(s, "SELECT strength, refreshed_at, used_count FROM memories WHERE id = ?", [
      a1,
    ])
  )[0];

  fake.script({
    json: { learnings: [{ content: "Set a lock timeout on migrations so a locked orders table fails fast instead of stalling the deploy.", sources: [1] }] },
  });
  const out = await runNightly(s, { day: DAY });
  expect(out.ran).toBe(true);

  // learn: one call (ops held only memories: no call for it), without the held-back memories.
  expect(fake.requests.length).toBe(1);
  const prompt = fake.receivedText();
  expect(prompt).toContain("locked the orders table");
  for (const text of ["Fridays after 6pm", "Jenkins server", "pager rotates", "5433 behind pgbouncer!"]) expect(prompt).not.toContain(text);
  expect(prompt).toContain("5433 behind pgbouncer.");
  const [learning] = await dbRows<{ id: string }>(s, "SELECT id FROM memories WHERE memory_type = 'learnings'");
  expect(await dbRows(s, "SELECT to_id FROM links WHERE from_id = ? AND relationship = 'derived_from'", [learning.id])).toEqual([{ to_id: good }]);

  // merge: B merged, A left as it was (neither copy absorbed, a1's strength and clock untouched).
  const ids = new Set((await dbRows<{ id: string }>(s, "SELECT id FROM memories")).map((r) => r.id));
  expect(ids.has(b2) && !ids.has(b1)).toBe(true);
  expect(ids.has(a1) && ids.has(a2)).toBe(true);
  expect((await dbRows(s, "SELECT strength, refreshed_at, used_count FROM memories WHERE id = ?", [a1]))[0]).toEqual(a1Before);

  // prune: the plain faded memory went; the one awaiting review and the retired one stay.
  expect(ids.has(faded)).toBe(false);
  expect(ids.has(fadedWrong) && ids.has(fadedRetired)).toBe(true);

  expect(out.digest).toMatchObject({ merged: 1, dropped: 1, written: 1, held_back: { learn: 4, merge: 1 } });
  expect(out.message).toContain("held back by feedback: 4 memories not sent to the model, 1 pair not merged");

  // A review settles the marks: the next forced run merges the pair and may learn from both.
  await reviewMemory(s, { id: a2, action: "review" }, "test");
  fake.script({ json: { learnings: [] } });
  const again = await runNightly(s, { day: DAY, force: true });
  expect(again.digest).toMatchObject({ merged: 1, held_back: { merge: 0 } });
  const left = new Set((await dbRows<{ id: string }>(s, "SELECT id FROM memories")).map((r) => r.id));
  expect(left.has(a2) && !left.has(a1)).toBe(true);
});
