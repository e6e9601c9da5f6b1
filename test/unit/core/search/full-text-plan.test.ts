import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { conjunctionCandidates, planTerms } from "../../../../src/core/search/full-text";
import { BM25_CONJUNCTION_MAX_WORDS, BM25_MAX_SCORED_ROWS, BM25_MAX_WEIGHED_POSTINGS } from "../../../../src/core/search/tuning";
import { bm25Expression, TermCounts } from "../../../../src/store/sqlite/search-fts";

// Which words a large store's full-text search selects and ranks by
// (core/search/full-text.ts), with the counts given as numbers, and SQLite's
// counting of rows holding several words together.
const TOTAL = 200_000;
const MAX = BM25_MAX_SCORED_ROWS;
const dfOf = (counts: Record<string, number>) => (t: string) => counts[t] ?? 0;

test("a word under the scored-rows cap selects; the next words rank as the postings budget allows", () => {
  const df = dfOf({ rare: 50, mid: MAX * 2, common: BM25_MAX_WEIGHED_POSTINGS, huge: TOTAL * 0.6 });
  const together = () => {
    throw new Error("rows together are counted only when every word is over the cap");
  };
  expect(planTerms(["common", "rare", "mid", "huge"], TOTAL, df, together, 60)).toEqual({ match: ["rare"], rank: ["rare", "mid"] });
});

test("when every word is common, rows must hold the fewest rarest words that bring them under the cap", () => {
  const df = dfOf({ a: MAX * 3, b: MAX * 4, c: MAX * 5, d: MAX * 6 });
  const asked: string[] = [];
  const rows: Record<string, number> = { "a b": MAX * 2, "a b c": MAX - 1 };
  const together = (words: readonly string[], cap: number) => {
    expect(cap).toBe(MAX + 1);
    asked.push(words.join(" "));
    return Math.min(cap, rows[words.join(" ")] ?? 0);
  };
  expect(planTerms(["d", "c", "b", "a"], TOTAL, df, together, 60)).toEqual({ match: ["a", "b", "c"], rank: ["a", "b", "c"], together: true });
  expect(asked).toEqual(["a b", "a b c"]);
  // Rows of exactly the cap are enough; the search's k is not.
  expect(planTerms(["a", "b", "c"], TOTAL, df, (w) => (w.length === 2 ? MAX : 0), 60)?.match).toEqual(["a", "b"]);
});

test("a conjunction must leave the search's k rows: else the last one that did, else the rarest word alone", () => {
  const df = dfOf({ a: MAX * 3, b: MAX * 4, c: MAX * 5 });
  // a and b leave more than the cap, a, b and c fewer than k: a and b.
  expect(planTerms(["a", "b", "c"], TOTAL, df, (w) => (w.length === 2 ? MAX + 1 : 10), 60)).toEqual({ match: ["a", "b"], rank: ["a", "b"], together: true });
  // Even a and b leave fewer than k: the rarest word selects, as without counts of words together.
  const single = planTerms(["a", "b", "c"], TOTAL, df);
  expect(single).toEqual({ match: ["a"], rank: ["a"] });
  expect(planTerms(["a", "b", "c"], TOTAL, df, () => 59, 60)).toEqual(single);
  // One word over the cap has nothing to AND with.
  expect(planTerms(["a"], TOTAL, df, () => 0, 60)).toEqual({ match: ["a"], rank: ["a"] });
});

test("at most BM25_CONJUNCTION_MAX_WORDS words are AND'ed, and words in over half the store never are", () => {
  const words = Array.from({ length: BM25_CONJUNCTION_MAX_WORDS + 3 }, (_, i) => `w${i}`);
  const df = (t: string) => (t === "w0" ? TOTAL : MAX * 2 + Number(t.slice(1)));
  const plan = planTerms(words, TOTAL, df, () => MAX * 2, 1);
  expect(plan?.match).toEqual(words.slice(1, 1 + BM25_CONJUNCTION_MAX_WORDS));
});

test("the lists an engine counts ahead (PostgreSQL) are every list planTerms asks about", () => {
  let x = 7;
  const rnd = () => (x = (x * 1103515245 + 12345) >>> 0) / 2 ** 32;
  for (let round = 0; round < 200; round++) {
    const words = Array.from({ length: 1 + Math.floor(rnd() * 6) }, (_, i) => `w${i}`);
    const counts = Object.fromEntries(words.map((w) => [w, Math.floor(rnd() * MAX * 8)]));
    const ahead = conjunctionCandidates(words, TOTAL, dfOf(counts)).map((l) => l.join(" "));
    const asked: string[] = [];
    planTerms(words, TOTAL, dfOf(counts), (w) => (asked.push(w.join(" ")), Math.floor(rnd() * MAX * 2)), 60);
    for (const a of asked) expect(ahead).toContain(a);
    // ...and planTerms asks whenever the engine would have counted.
    expect(asked.length > 0).toBe(ahead.length > 0);
  }
});

test("SQLite: the expression of a conjunction, and rows holding words together counted up to a cap, cached", () => {
  const db = new Database(":memory:");
  db.run("CREATE VIRTUAL TABLE memories_fts USING fts5(content, tokenize='porter unicode61')");
  const insert = db.prepare("INSERT INTO memories_fts(content) VALUES (?)");
  for (let i = 0; i < 40; i++) insert.run(`${i % 2 ? "kafka" : "redis"} ${i % 4 === 0 ? "lag" : "idle"} ${i % 8 === 0 ? 'quo"te' : ""}`);
  const counts = new TermCounts(db);
  expect(counts.together(["redis", "lag"], 100, 40)).toBe(10);
  expect(counts.together(["redis", "lag"], 4, 40)).toBe(4);
  expect(counts.together(["kafka", "lag"], 100, 40)).toBe(0);
  // A quote inside a word is inert (doubled), and porter stems as the index does.
  expect(counts.together(["quo", "te", "lags"], 100, 40)).toBe(5);
  // Cached: a write the cache has not seen is not counted until the store grows past the drift.
  insert.run("redis lag");
  expect(counts.together(["redis", "lag"], 100, 40)).toBe(10);
  expect(counts.together(["redis", "lag"], 100, 80)).toBe(11);
  // Every word common on a large store: the words AND'ed, ranked by themselves alone.
  const big = 100 * MAX;
  const expr = bm25Expression(
    ["kafka", "lag", "redis"],
    big,
    (t) => ({ kafka: 3 * MAX, lag: 2 * MAX, redis: 4 * MAX })[t] ?? 0,
    () => MAX,
    60,
  );
  expect(expr).toBe('"lag" AND "kafka"');
  db.close();
});
