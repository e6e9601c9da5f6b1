/**
 * A small but realistic history for the dashboard tests, with every figure it
 * should produce written out by hand (not computed by the code under test).
 * Memories go through the real insert path (tags, triggers), uses through
 * fetchMemory, showings through the same SQL as the recall index (in SQL both
 * engines speak, through dbRows).
 */
import { addLink } from "../../src/core/graph";
import { deleteMemory, fetchMemory } from "../../src/core/memories";
import { insertMemoryRows } from "../../src/core/ingest";
import type { MemoryType } from "../../src/core/memories";
import type { NightlyDigest } from "../../src/core/nightly";
import type { Services } from "../../src/core/services";
import { dbRows } from "./engine";
import { withStorage } from "../../src/core/storage";

export const DAY = 86_400_000;
/** The clock of the seeded server: 2026-03-15 12:00 UTC. Day 0 of the 30-day window is 2026-02-14. */
export const NOW = Date.parse("2026-03-15T12:00:00Z");
export const TODAY = Date.parse("2026-03-15T00:00:00Z");
const at = (daysAgo: number, hour = 9) => TODAY - daysAgo * DAY + hour * 3_600_000;

/** A clock the seed moves (uses and showings are stamped with s.now()). */
export function movableClock(start = NOW) {
  let t = start;
  return { now: () => t, set: (v: number) => (t = v) };
}

interface Spec {
  key: string;
  createdAt: number;
  type: MemoryType;
  project: string | null;
  tags?: string[];
}

const WINDOW_START = TODAY - 29 * DAY;
// Topics are disjoint word sets so the fallback embedder links nothing by itself.
const SPECS: Spec[] = [
  { key: "m1", createdAt: at(40), type: "knowledge", project: "atlas" },
  { key: "m2", createdAt: at(35), type: "experience", project: "atlas" },
  { key: "m3", createdAt: WINDOW_START - 1, type: "decisions", project: null, tags: ["postgres"] }, // last ms before the window
  { key: "m4", createdAt: WINDOW_START, type: "knowledge", project: "billing" }, // first ms of the window
  { key: "m5", createdAt: at(29, 15), type: "experience", project: null, tags: ["docker"] },
  { key: "m6", createdAt: at(10), type: "learnings", project: "atlas" },
  { key: "m7", createdAt: at(10, 11), type: "knowledge", project: null, tags: ["redis", "kafka"] }, // primary: redis (heavier), not kafka (first by name)
  { key: "m8", createdAt: at(10, 23), type: "decisions", project: "billing" },
  { key: "m9", createdAt: at(1), type: "experience", project: null, tags: ["kafka"] },
  { key: "m10", createdAt: at(0, 1), type: "knowledge", project: "vega" },
  { key: "m11", createdAt: at(0, 2), type: "learnings", project: "helios" },
  { key: "m12", createdAt: at(0, 3), type: "experience", project: null }, // no tag at all: "general"
];
const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima", "mike"];

async function show(s: Services, id: string, when: number): Promise<void> {
  // What the recall index does for one memory in one index (src/core/recall/recall.ts markShown), in SQL both engines speak.
  await dbRows(
    s,
    "UPDATE memories SET shown_count = shown_count + 1, last_shown_at = ?, refreshed_at = CASE WHEN refreshed_at > ? THEN refreshed_at ELSE ? END WHERE id = ?",
    [when, when, when, id],
  );
  await dbRows(s, "INSERT INTO memory_events(memory_id, kind, at) VALUES (?, 'shown', ?)", [id, when]);
}

function digest(day: string, n: number): NightlyDigest {
  return {
    run_id: null,
    day,
    status: n === 3 ? "partial" : "done",
    forced: false,
    started_at: `${day}T02:00:00.000Z`,
    finished_at: `${day}T02:01:00.000Z`,
    model: "test-model",
    considered: 10 + n,
    read: 10 + n,
    written: n,
    learnings: [],
    rejected: 0,
    merged: n % 3,
    merges: [],
    dropped: n % 2,
    decayed: 2 * n,
    sessions_expired: 0,
    dropped_fragments: { count: 0, by_reason: {} },
    model_calls: 1 + n,
    max_model_calls: 50,
    skipped: n === 3 ? [{ step: "learn", reason: "model failed: timeout" }] : [],
    errors: [],
    steps: { learn: n === 3 ? "incomplete" : "done", recheck: "done", merge: "done", decay: "done", prune: "done" },
    resumed: 0,
  };
}

/** Seeds the history below into `s` (whose clock must be `clock`), and returns its ids. */
export async function seedDashboard(s: Services, clock: ReturnType<typeof movableClock>): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  const all = [...SPECS, { key: "gone", createdAt: at(50), type: "knowledge" as MemoryType, project: "gone" }];
  const contents = all.map((m, i) => `${WORDS[i % WORDS.length]} ${m.key} ${"x".repeat(i + 1)} note about ${m.project ?? m.tags?.join(" ") ?? "misc"}`);
  const vectors = await s.embedder.embed(contents, "document");
  await s.storage.transaction(async (tx) => {
    const rows = await insertMemoryRows(
      withStorage(s, tx),
      all.map((m, i) => ({ content: contents[i], memoryType: m.type, project: m.project, sourceAgent: "seed", createdAt: m.createdAt, tags: m.tags })),
      vectors,
    );
    all.forEach((m, i) => {
      ids[m.key] = rows[i].id;
    });
  });
  // Memory m12 has no tag at all (a bulk import can leave one so); the dashboard counts it as "general".
  await dbRows(s, "DELETE FROM memory_tags WHERE memory_id = ?", [ids.m12]);
  await dbRows(s, "DELETE FROM links");
  await addLink(s, ids.m1, ids.m2, "related", 0.8);
  await addLink(s, ids.m6, ids.m1, "derived_from", 0.9);
  await addLink(s, ids.m7, ids.m9, "related", 0.7);
  await addLink(s, ids.m4, ids.m8, "related", 0.6);

  // 45 days ago (before the window): three showings, two uses; "gone" is deleted afterwards.
  for (const k of ["m1", "m2", "gone"]) await show(s, ids[k], at(45));
  for (const k of ["m1", "gone"]) {
    clock.set(at(45, 10));
    await fetchMemory(s, ids[k]);
  }
  for (const k of ["m1", "m4", "m6", "m7"]) await show(s, ids[k], at(10, 23) + 30 * 60_000);
  clock.set(at(10, 23) + 40 * 60_000);
  await fetchMemory(s, ids.m6);
  for (const k of ["m6", "m7", "m9"]) await show(s, ids[k], at(1, 14));
  clock.set(at(1, 15));
  await fetchMemory(s, ids.m6);
  await fetchMemory(s, ids.m7);
  for (const k of ["m10", "m6", "m12"]) await show(s, ids[k], at(0, 4));
  clock.set(at(0, 5));
  await fetchMemory(s, ids.m10);
  clock.set(NOW);
  await deleteMemory(s, ids.gone);

  // Eight nightly runs: the dashboard shows the latest seven, newest first.
  for (let n = 1; n <= 8; n++) {
    const day = new Date(TODAY - (9 - n) * DAY).toISOString().slice(0, 10);
    const started = Date.parse(`${day}T02:00:00Z`);
    await dbRows(s, "INSERT INTO nightly_runs(day, status, owner, started_at, heartbeat_at, finished_at, digest) VALUES (?, ?, 'seed', ?, ?, ?, ?)", [
      day,
      n === 3 ? "partial" : "done",
      started,
      started,
      started + 60_000,
      JSON.stringify(digest(day, n)),
    ]);
  }
  return ids;
}

/** What the 30-day dashboard of the seeded history shows, worked out by hand. */
export const EXPECTED = {
  counts: { memories: 12, learnings: 2, links: 4, domains: 8 }, // distinct tags: m12 has none, so "general" is no tag
  window: { days: 30, from: "2026-02-14", to: "2026-03-15" },
  growth: {
    base: 3,
    // day -> [knowledge, experience, decisions, learnings]; every other day adds nothing
    added: {
      "2026-02-14": [1, 1, 0, 0],
      "2026-03-05": [1, 0, 1, 1],
      "2026-03-14": [0, 1, 0, 0],
      "2026-03-15": [1, 1, 0, 1],
    } as Record<string, number[]>,
    totals: { "2026-02-13": null, "2026-02-14": 5, "2026-03-04": 5, "2026-03-05": 8, "2026-03-14": 9, "2026-03-15": 12 } as Record<string, number | null>,
  },
  domains: {
    primary_domains: 9,
    top: [
      { domain: "atlas", memories: 3 },
      { domain: "billing", memories: 2 },
      { domain: "docker", memories: 1 },
      { domain: "general", memories: 1 },
      { domain: "helios", memories: 1 },
      { domain: "kafka", memories: 1 },
      { domain: "postgres", memories: 1 },
      { domain: "redis", memories: 1 },
    ],
    other: { domains: 1, memories: 1 },
  },
  recall: {
    showings: 13,
    uses: 6,
    uses_per_showing: 0.462,
    never_shown: 4,
    never_used: 8,
    never_shown_share: 0.333,
    never_used_share: 0.667,
    // day -> [showings, uses, uses_per_showing]
    days: {
      "2026-03-05": [4, 1, 0.25],
      "2026-03-14": [3, 2, 0.667],
      "2026-03-15": [3, 1, 0.333],
    } as Record<string, [number, number, number]>,
  },
  /** Nightly run days, newest first (runs 8..2; run 1 is the eighth newest). */
  nightlyDays: ["2026-03-14", "2026-03-13", "2026-03-12", "2026-03-11", "2026-03-10", "2026-03-09", "2026-03-08"],
};
