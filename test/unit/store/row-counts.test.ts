import { afterEach, expect, test } from "bun:test";
import { health } from "../../../src/core/health";
import { addLink } from "../../../src/core/graph";
import { deleteMemory } from "../../../src/core/memories";
import { ingestMemory } from "../../../src/core/ingest";
import { dbRows } from "../../helpers/engine";
import { makeServices, type TestServices } from "../../helpers/services";

// /health's memory and link counts are kept by trigger on SQLite (count(*) read
// a whole index per table on the event loop, 7-90 ms at 100k); PostgreSQL counts
// in the database. Either way they must stay what count(*) says through every
// kind of write.

const open: TestServices[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

async function counted(s: TestServices): Promise<{ memories: number; links: number }> {
  const [m] = await dbRows<{ n: number }>(s, "SELECT count(*) AS n FROM memories");
  const [l] = await dbRows<{ n: number }>(s, "SELECT count(*) AS n FROM links");
  return { memories: Number(m.n), links: Number(l.n) };
}

test("/health's counts follow ingests (with their similarity links), re-weighted links, rolled-back writes and deletes that take links along", async () => {
  const s = makeServices();
  open.push(s);
  const expectHealthExact = async () => {
    const h = await health(s);
    expect({ memories: h.memories, links: h.links }).toEqual(await counted(s));
  };
  await expectHealthExact();
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) {
    const r = await ingestMemory(s, { content: `the deploy pipeline retries flaky integration step ${i % 3} on the staging cluster`, project: "infra" });
    ids.push(r.id!);
  }
  const after = await health(s);
  expect(after.memories).toBe(12);
  expect(after.links).toBeGreaterThan(0);
  await expectHealthExact();

  // A link added, then the same link again (an upsert that re-weights it: no new row).
  await addLink(s, ids[0], ids[11], "caused_by", 0.4);
  await addLink(s, ids[0], ids[11], "caused_by", 0.9);
  expect((await health(s)).links).toBe(after.links + 1);
  await expectHealthExact();

  // A write that fails inside its transaction leaves the counts as they were.
  await expect(
    s.storage.transaction(async (tx) => {
      await tx.graph.addLinks([{ fromId: ids[1], toId: ids[10], relationship: "related", weight: 0.5 }], s.now());
      throw new Error("rolled back");
    }),
  ).rejects.toThrow("rolled back");
  await expectHealthExact();

  // Deleting a memory deletes its links (cascade) and both counts move.
  await deleteMemory(s, ids[0]);
  const end = await health(s);
  expect(end.memories).toBe(11);
  expect(end.links).toBeLessThan(after.links + 1);
  await expectHealthExact();
});
