import { afterAll, expect, test } from "bun:test";
import { openStore, type Store } from "../../../../src/store/sqlite";
import { scoreAll, walkTouched } from "../../../../src/store/sqlite/search-recent";
import { RECENT_LINK_LIST_FROM } from "../../../../src/store/sqlite/tuning";
import { onPostgres } from "../../../helpers/engine";

// SQLite's /recent walk (threshold algorithm over the touched, link-count and
// strength lists) against scoring every row, on generated stores built to
// break its bound: hubs, very strong old memories, old rows refreshed today,
// zero and negative strength, rows sharing one time or one strength (batches
// that cannot move), exact ties only seq orders, a project of a few rows,
// stale stores, future and pre-creation refresh times. Small first batches
// make the walk take many turns on a few thousand rows.
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 26);
const stores: Store[] = [];
afterAll(() => {
  for (const s of stores.splice(0)) s.close();
});

type Gen = () => number;
function prng(seed: number): Gen {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
}

/** One generated store: a mix of traits drawn from the seed, so each seed stresses different parts of the bound. */
function generate(seed: number): { store: Store; traits: string[]; projects: (string | null)[] } {
  const r = prng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const chance = (p: number) => r() < p;
  const traits: string[] = [];
  const trait = (name: string, p: number) => (chance(p) ? (traits.push(name), true) : false);
  const n = 200 + Math.floor(r() * 1000);
  const stale = trait("stale", 0.3) ? (20 + r() * 400) * DAY : 0;
  const levels = trait("strength levels", 0.5);
  const continuous = trait("continuous strength", 0.3);
  const hubs = trait("hubs", 0.5);
  const strongOld = trait("very strong old", 0.5);
  const refreshedOld = trait("old rows refreshed lately", 0.5);
  const oddStrength = trait("zero and negative strength", 0.4);
  const oneTime = trait("a block sharing one time", 0.3);
  const ties = trait("identical rows", 0.4);
  const oddTimes = trait("future and pre-creation times", 0.3);
  const noLinks = trait("no links", 0.15);
  // Link counts around RECENT_LINK_LIST_FROM, where the partial link list (migration 0014) ends.
  const linksAtCut = trait("links around the list's cut", 0.3);

  const store = openStore(":memory:");
  stores.push(store);
  const ins = store.sqlite.prepare(
    "INSERT INTO memories(id, content, memory_type, project, created_at, updated_at, refreshed_at, strength, link_count) VALUES (?, ?, 'knowledge', ?, ?, ?, ?, ?, ?)",
  );
  const blockTime = NOW - stale - Math.floor(r() * 5 * DAY);
  store.sqlite.transaction(() => {
    for (let i = 0; i < n; i++) {
      let created = NOW - stale - Math.floor(r() ** 2 * 365 * DAY);
      if (oneTime && chance(0.3)) created = blockTime;
      let refreshed = chance(0.15) ? created + Math.floor(r() * (NOW - created)) : created;
      if (refreshedOld && chance(0.03)) {
        created = NOW - Math.floor((200 + r() * 200) * DAY);
        refreshed = NOW - Math.floor(r() * 2 * DAY);
      }
      if (oddTimes && chance(0.05)) {
        if (chance(0.5)) created = NOW + Math.floor(r() * 3 * DAY);
        else refreshed = created - Math.floor(r() * 60 * DAY);
      }
      let strength = 1;
      if (levels && chance(0.1)) strength = 1 + 0.25 * (1 + Math.floor(r() * 5));
      if (continuous) strength = 0.2 + r() * 3;
      if (strongOld && chance(0.01)) {
        strength = 4 + r();
        created = refreshed = NOW - Math.floor((60 + r() * 300) * DAY);
      }
      if (oddStrength && chance(0.1)) strength = pick([0, -0.5, -1, -4]);
      let links = noLinks ? 0 : Math.floor(r() ** 3 * 12);
      if (linksAtCut) links = RECENT_LINK_LIST_FROM - 3 + Math.floor(r() * 6);
      if (hubs && chance(0.005)) links = 200 + Math.floor(r() * 3000);
      const project = chance(0.003) ? "few" : chance(0.1) ? null : chance(0.7) ? "a" : "b";
      ins.run(crypto.randomUUID(), `note ${i}`, project, created, created, refreshed, strength, links);
    }
    // Exact ties: only seq DESC orders these.
    if (ties) {
      const t = NOW - stale - Math.floor(r() * 3 * DAY);
      const s = pick([1, 2, 1.5]);
      const l = Math.floor(r() * 6);
      for (let i = 0; i < 20 + Math.floor(r() * 60); i++) ins.run(crypto.randomUUID(), `tie ${i}`, pick(["a", "b", null]), t, t, t, s, l);
    }
  })();
  return { store, traits, projects: [null, "a", "b", "few", "missing"] };
}

const SEEDS = 30;
// 0, 1, a tie-prone 2, the default, the API's largest, and more than any store holds.
const LIMITS = [0, 1, 2, 12, 100, 2500];

test.skipIf(onPostgres)(
  "the walk returns exactly what scoring every row returns, on generated adversarial stores [SQLite engine's statements]",
  () => {
    let compared = 0;
    let rows = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const { store, traits, projects } = generate(seed * 7919);
      const batches = { touched: 4 + (seed % 5) * 12, lists: 1 + (seed % 4) * 3 };
      for (const project of projects) {
        for (const limit of LIMITS) {
          // Half the stores asked a month after they were written (the newest rows have faded).
          const p = { now: seed % 2 ? NOW : NOW + 30 * DAY, project, limit };
          const expected = scoreAll(store.sqlite, p).map((r) => [r.id, r.importance]);
          // The production batch sizes too (on these small stores the first batch often holds them).
          for (const b of limit === 12 ? [batches, undefined] : [batches]) {
            const got = walkTouched(store.sqlite, p, b).map((r) => [r.id, r.importance]);
            expect({ seed, traits, p, b, got }).toEqual({ seed, traits, p, b, got: expected });
          }
          compared++;
          rows += expected.length;
        }
      }
      store.close();
    }
    // The cases ran and had rows to order.
    expect(compared).toBe(SEEDS * 5 * LIMITS.length);
    expect(rows).toBeGreaterThan(20_000);
  },
  120_000,
);

test.skipIf(onPostgres)("a negative strength is let through the cheap test: the decay only lifts it [SQLite engine's statements]", () => {
  // An import refreshed 300 days before it was created: its strength term is
  // -4 × 0.15 (decayed), not -4; with 8 links and created two hours ago it is
  // the most important row, behind newer rows of zero strength.
  const store = openStore(":memory:");
  stores.push(store);
  const ins = store.sqlite.prepare(
    "INSERT INTO memories(id, content, memory_type, project, created_at, updated_at, refreshed_at, strength, link_count) VALUES (?, ?, 'knowledge', 'p', ?, ?, ?, ?, ?)",
  );
  const hour = 3_600_000;
  ins.run("import", "imported", NOW - 2 * hour, NOW - 2 * hour, NOW - 300 * DAY, -4, 8);
  for (let i = 0; i < 5; i++) ins.run(`new-${i}`, "new", NOW - hour + i, NOW - hour + i, NOW - hour + i, 0, 0);
  for (const project of [null, "p"]) {
    const p = { now: NOW, project, limit: 1 };
    expect(scoreAll(store.sqlite, p).map((r) => r.id)).toEqual(["import"]);
    expect(walkTouched(store.sqlite, p, { touched: 2, lists: 1 }).map((r) => r.id)).toEqual(["import"]);
  }
});

test.skipIf(onPostgres)("the link lists are partial at RECENT_LINK_LIST_FROM, and the walk's link statements read them", () => {
  const store = openStore(":memory:");
  stores.push(store);
  for (const name of ["memories_link_count", "memories_project_link_count"]) {
    const sql = store.sqlite.query<{ sql: string }, [string]>("SELECT sql FROM sqlite_master WHERE name = ?").get(name)!.sql;
    expect(sql).toContain(`WHERE link_count >= ${RECENT_LINK_LIST_FROM}`);
  }
  for (const [where, index] of [
    ["", "memories_link_count"],
    ["project = 'a' AND", "memories_project_link_count"],
  ]) {
    const plan = store.sqlite
      .query<{ detail: string }, []>(
        `EXPLAIN QUERY PLAN SELECT link_count FROM memories WHERE ${where} link_count >= ${RECENT_LINK_LIST_FROM} AND link_count <= 20 ORDER BY link_count DESC LIMIT 1 OFFSET 3`,
      )
      .all()
      .map((r) => r.detail)
      .join("; ");
    expect(plan).toContain(index);
  }
});
