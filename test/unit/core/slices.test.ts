import { afterEach, expect, test } from "bun:test";
import { insertMemoryRows } from "../../../src/core/ingest";
import { ensureCalibration, warmWordCounts } from "../../../src/core/search";
import { slicer, Traffic } from "../../../src/core/slices";
import { BACKGROUND_SLICE_MS } from "../../../src/core/tuning";
import { makeServices, type TestServices } from "../../helpers/services";

// Start-up work beside live traffic (the similarity calibration, the word-count
// warm-up) must give requests the event loop after about BACKGROUND_SLICE_MS
// of work, whatever one unit of it costs: the calibration once ran 20 nearest
// searches between yields (60-90 ms at 100k, every search in the first second
// after the index was ready waited for that).

const open: TestServices[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    /* a unit of work that costs more than a slice */
  }
};

/** How many calls of `count` happen before a callback queued behind pending I/O (what a request is) gets to run. */
async function callsBeforeOthersRun(work: () => Promise<unknown>, count: { n: number }): Promise<number> {
  let seen = -1;
  const probe = () => {
    if (count.n === 0) setImmediate(probe);
    else seen = count.n;
  };
  setImmediate(probe);
  await work();
  return seen;
}

/** A store of `texts` (one project) with every vector in the index. */
async function storeOf(texts: string[]): Promise<TestServices> {
  const s = makeServices();
  open.push(s);
  const vectors = await s.embedder.embed(texts, "document");
  const rows = await insertMemoryRows(
    s,
    texts.map((content) => ({ content, memoryType: "knowledge" as const, project: "p", sourceAgent: "test", createdAt: Date.now() })),
    vectors,
  );
  rows.forEach((r, i) => {
    s.index.upsert(r.seq, vectors[i]!, "p");
  });
  return s;
}

test("a slicer lets work continue synchronously within a slice and gives way once it is spent", async () => {
  const pause = slicer(1000);
  expect(pause()).toBeUndefined();
  const spent = slicer(1);
  busy(2);
  let ranBefore = false;
  setImmediate(() => (ranBefore = true));
  const p = spent();
  expect(p).toBeInstanceOf(Promise);
  await p;
  expect(ranBefore).toBe(true);
  // A new slice starts after the pause.
  expect(spent()).toBeUndefined();
});

test("past its slice, work waits for a lull in requests; under constant requests only up to its deferral budget", async () => {
  const traffic = new Traffic();
  // Requests every 5 ms for ~60 ms, then none.
  let lastRequest = 0;
  let flowing = true;
  const timer = setInterval(() => {
    traffic.note();
    lastRequest = performance.now();
  }, 5);
  setTimeout(() => {
    clearInterval(timer);
    flowing = false;
  }, 60);
  traffic.note();
  const pause = slicer(1, traffic, { quietMs: 20, deferMaxMs: 10_000 });
  busy(2);
  await pause();
  expect(flowing).toBe(false);
  expect(traffic.idleMs).toBeGreaterThanOrEqual(20);
  expect(performance.now() - lastRequest).toBeGreaterThanOrEqual(20);

  // Requests that never stop (a request always just arrived): without the budget this would wait forever.
  const endless = new (class extends Traffic {
    override get idleMs() {
      return 0;
    }
  })();
  const bounded = slicer(1, endless, { quietMs: 20, deferMaxMs: 40 });
  for (let unit = 0; unit < 3; unit++) {
    busy(2);
    await bounded();
  }
});

test("the calibration yields between nearest searches that each outlast a slice", async () => {
  const s = await storeOf(Array.from({ length: 240 }, (_, i) => `memory ${i} about topic ${i % 12} with words alpha${i % 7} beta${i % 5} gamma${i % 3}`));
  const search = s.storage.search;
  const nearest = search.nearest.bind(search);
  const calls = { n: 0 };
  search.nearest = async (v, k, project) => {
    calls.n++;
    busy(BACKGROUND_SLICE_MS + 1);
    return nearest(v, k, project);
  };
  const seen = await callsBeforeOthersRun(() => ensureCalibration(s, true), calls);
  expect(calls.n).toBeGreaterThan(20);
  // The first search that spends the slice is followed by a pause: the probe runs after it.
  expect(seen).toBeGreaterThanOrEqual(1);
  expect(seen).toBeLessThanOrEqual(2);
});

test("the warm-up yields between word counts that each outlast a slice", async () => {
  const s = await storeOf(Array.from({ length: 400 }, (_, i) => `kafka cluster restarts nightly ${i % 9} and redis eviction storms ${i % 4} billing exports`));
  const search = s.storage.search;
  const documentFrequency = search.documentFrequency.bind(search);
  const calls = { n: 0 };
  search.documentFrequency = async (term, cap) => {
    calls.n++;
    busy(BACKGROUND_SLICE_MS + 1);
    return documentFrequency(term, cap);
  };
  const seen = await callsBeforeOthersRun(() => warmWordCounts(s), calls);
  expect(calls.n).toBeGreaterThan(3);
  expect(seen).toBeGreaterThanOrEqual(1);
  expect(seen).toBeLessThanOrEqual(2);
});

test("the calibration's and the warm-up's random samples are read with their slicer's pause", async () => {
  // One ORDER BY random() statement over the whole store held the event loop at start: 36-53 ms for
  // the warm-up's 2000 contents and 210-220 ms for the calibration's 400 vectors at 100k (SQLite).
  const s = await storeOf(Array.from({ length: 240 }, (_, i) => `memory ${i} about topic ${i % 12} with words alpha${i % 7} beta${i % 5}`));
  const search = s.storage.search;
  const sampleVectors = search.sampleVectors.bind(search);
  const sampleContents = search.sampleContents.bind(search);
  const given: string[] = [];
  search.sampleVectors = async (n, pause) => {
    given.push(`vectors:${typeof pause}`);
    return sampleVectors(n, pause);
  };
  search.sampleContents = async (n, chars, pause) => {
    given.push(`contents:${typeof pause}`);
    return sampleContents(n, chars, pause);
  };
  await ensureCalibration(s, true);
  const warmed = await warmWordCounts(s);
  expect(given).toEqual(["vectors:function", "contents:function"]);
  expect(warmed.sampled).toBe(240);
});

test("a calibration aborted mid-way (shutdown) stops between searches and stores nothing", async () => {
  const s = await storeOf(Array.from({ length: 240 }, (_, i) => `memory ${i} about topic ${i % 12} with words alpha${i % 7} beta${i % 5}`));
  const search = s.storage.search;
  const nearest = search.nearest.bind(search);
  const stop = new AbortController();
  let calls = 0;
  search.nearest = async (v, k, project) => {
    if (++calls === 3) stop.abort();
    busy(BACKGROUND_SLICE_MS + 1);
    return nearest(v, k, project);
  };
  const t = await ensureCalibration(s, true, stop.signal);
  expect(calls).toBe(3);
  expect(t.source).toBe("default");
  expect(await search.calibration(s.embedder.id)).toBeNull();
});
