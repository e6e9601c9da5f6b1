import { afterEach, describe, expect, test } from "bun:test";
import { fetchMemory } from "../../../../src/core/memories";
import { ingestMemory } from "../../../../src/core/ingest";
import { isShortPrompt, recallIndex, RECALL_HEADING } from "../../../../src/core/recall";
import { RECALL_MAX_LINES } from "../../../../src/core/recall/tuning";
import { AppError } from "../../../../src/errors";
import { dbRow } from "../../../helpers/engine";
import { makeServices, type TestServices } from "../../../helpers/services";

const open: TestServices[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

let clock = Date.parse("2026-03-10T12:00:00Z");
function services(opts: Parameters<typeof makeServices>[0] = {}): TestServices {
  const s = makeServices({ now: () => clock, ...opts });
  open.push(s);
  return s;
}

const MEMORIES: [string, string | null][] = [
  ["The staging Postgres database listens on port 5433 behind pgbouncer; connect with psql -p 5433.", "infra"],
  ["Production deploys run through the GitHub Actions workflow deploy.yml and need a manual approval.", "infra"],
  ["Terraform state for the infra project lives in the S3 bucket infra-tfstate with DynamoDB locking.", "infra"],
  ["The React frontend is built with Vite into dist/ and served by the nginx container.", "web"],
  ["The alpha build cache lives in /var/cache/alpha and is cleared by make clean-cache.", "alpha"],
  ["The beta build cache is stored in Redis and expires after six hours.", "beta"],
  ["Always run bun test with the preload file so every test gets a temporary service home.", null],
];

async function seed(s: TestServices): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const [content, project] of MEMORIES) {
    const r = await ingestMemory(s, { content, project });
    if (r.id === null) throw new Error("not stored");
    ids.set(content.split(" ").slice(0, 3).join(" "), r.id);
  }
  return ids;
}

const POSTGRES = "which port does the staging postgres database listen on?";
type Row = { shown_count: number; used_count: number; last_shown_at: number | null; refreshed_at: number; strength: number };
const row = async (s: TestServices, id: string) =>
  (await dbRow<Row>(s, "SELECT shown_count, used_count, last_shown_at, refreshed_at, strength FROM memories WHERE id = ?", [id]))!;
const events = async (s: TestServices, id: string, kind: string) =>
  (await dbRow<{ n: number }>(s, "SELECT count(*) AS n FROM memory_events WHERE memory_id = ? AND kind = ?", [id, kind]))!.n;

describe("the four forms", () => {
  test("index: a block headed for injection, one line per memory with short id, type, date and gist", async () => {
    const s = services();
    const ids = await seed(s);
    const pg = ids.get("The staging Postgres")!;
    const r = await recallIndex(s, { session_id: "s1", prompt: POSTGRES, project: "infra" });
    expect(r).toEqual({ block: expect.any(String), shown: [pg], turn: 1 });
    const block = (r as { block: string }).block;
    const lines = block.split("\n");
    expect(lines[0]).toBe(RECALL_HEADING);
    expect(lines[1]).toBe(
      `- \`${pg.slice(0, 8)}\` experience, 2026-03-10: The staging Postgres database listens on port 5433 behind pgbouncer; connect with psql -p 5433.`,
    );
    expect(block).toContain("GET /memory?id=<short id>");
    expect(block).toContain("memsvc_get");
    expect(lines.filter((l) => l.startsWith("- ")).length).toBeLessThanOrEqual(RECALL_MAX_LINES);
  });

  test("nothing relevant: block null, shown empty, the turn still counted", async () => {
    const s = services();
    await seed(s);
    expect(await recallIndex(s, { session_id: "s1", prompt: "how do I bake sourdough bread with rye flour?", project: "infra" })).toEqual({
      block: null,
      shown: [],
      turn: 1,
    });
    expect(await recallIndex(s, { session_id: "s1", prompt: "what is the capital of Australia and its population?" })).toEqual({
      block: null,
      shown: [],
      turn: 2,
    });
  });

  test("short prompt: skipped, with neither shown nor turn", async () => {
    const s = services();
    await seed(s);
    for (const prompt of ["ok", "  yes, do it  ", "postgres", "go on then"]) {
      expect(await recallIndex(s, { session_id: "s1", prompt, project: "infra" })).toEqual({ block: null, skipped: "short-prompt" });
    }
    expect(isShortPrompt("staging postgres port")).toBe(false);
  });

  test("reset clears the session: what was suppressed is shown again from turn 1", async () => {
    const s = services();
    const ids = await seed(s);
    const pg = ids.get("The staging Postgres")!;
    expect(await recallIndex(s, { session_id: "s1", prompt: POSTGRES, project: "infra" })).toMatchObject({ shown: [pg], turn: 1 });
    expect(await recallIndex(s, { session_id: "s1", prompt: POSTGRES, project: "infra" })).toEqual({ block: null, shown: [], turn: 2 });
    expect(await recallIndex(s, { session_id: "s1", reset: true })).toEqual({ ok: true, reset: true });
    expect(await recallIndex(s, { session_id: "s1", prompt: POSTGRES, project: "infra" })).toMatchObject({ shown: [pg], turn: 1 });
  });

  test("bad input is a 400-class error, never a silent default", async () => {
    const s = services();
    const bad = [
      { prompt: POSTGRES },
      { session_id: "", prompt: POSTGRES },
      { session_id: 42, prompt: POSTGRES },
      { session_id: "s", prompt: 7 },
      { session_id: "s" },
      { session_id: "s", reset: "yes" },
      { session_id: "s", prompt: POSTGRES, project: 3 },
      { session_id: "x".repeat(201), prompt: POSTGRES },
    ];
    for (const input of bad) {
      const e = await recallIndex(s, input as never).catch((x) => x);
      expect(e).toBeInstanceOf(AppError);
      expect((e as AppError).code).toBe("invalid");
    }
    expect(((await recallIndex(s, { prompt: POSTGRES } as never).catch((x) => x)) as AppError).message).toContain("session_id");
  });
});

// The spec's "about 30 turns", pinned as a literal: a loop to the imported constant would move with it.
const RECALL_SUPPRESS_TURNS = 30;

describe("dynamics", () => {
  test(`a shown memory is suppressed for ${RECALL_SUPPRESS_TURNS} turns, then shown again`, async () => {
    const s = services();
    const ids = await seed(s);
    const pg = ids.get("The staging Postgres")!;
    expect(await recallIndex(s, { session_id: "s1", prompt: POSTGRES, project: "infra" })).toMatchObject({ shown: [pg], turn: 1 });
    for (let turn = 2; turn <= RECALL_SUPPRESS_TURNS; turn++) {
      const r = await recallIndex(s, { session_id: "s1", prompt: POSTGRES, project: "infra" });
      expect(r).toEqual({ block: null, shown: [], turn });
    }
    // Another session is not affected by s1's window.
    expect(await recallIndex(s, { session_id: "s2", prompt: POSTGRES, project: "infra" })).toMatchObject({ shown: [pg], turn: 1 });
    expect(await recallIndex(s, { session_id: "s1", prompt: POSTGRES, project: "infra" })).toMatchObject({ shown: [pg], turn: RECALL_SUPPRESS_TURNS + 1 });
    expect((await row(s, pg)).shown_count).toBe(3);
  });

  test("two prompts of one session at once get distinct turns and list a memory once", async () => {
    const s = services();
    const ids = await seed(s);
    const pg = ids.get("The staging Postgres")!;
    const both = (await Promise.all([1, 2].map(() => recallIndex(s, { session_id: "s1", prompt: POSTGRES, project: "infra" })))) as {
      shown: string[];
      turn: number;
    }[];
    expect(both.map((r) => r.turn).sort()).toEqual([1, 2]);
    expect(both.flatMap((r) => r.shown)).toEqual([pg]);
    expect((await row(s, pg)).shown_count).toBe(1);
    expect(await events(s, pg, "shown")).toBe(1);
  });

  test("short prompts count as turns of the window", async () => {
    const s = services();
    const ids = await seed(s);
    const pg = ids.get("The staging Postgres")!;
    await recallIndex(s, { session_id: "s1", prompt: POSTGRES, project: "infra" });
    for (let i = 0; i < RECALL_SUPPRESS_TURNS - 1; i++) await recallIndex(s, { session_id: "s1", prompt: "ok" });
    expect(await recallIndex(s, { session_id: "s1", prompt: POSTGRES, project: "infra" })).toMatchObject({ shown: [pg], turn: RECALL_SUPPRESS_TURNS + 1 });
  });

  test("appearing marks shown and refreshes the decay clock; only fetching marks used", async () => {
    const start = Date.parse("2026-03-10T12:00:00Z");
    clock = start;
    const s = services();
    const ids = await seed(s);
    const pg = ids.get("The staging Postgres")!;
    const before = await row(s, pg);
    clock = start + 20 * 86_400_000;
    await recallIndex(s, { session_id: "s1", prompt: POSTGRES, project: "infra" });
    const shown = await row(s, pg);
    expect(shown).toMatchObject({ shown_count: before.shown_count + 1, used_count: 0, last_shown_at: clock, refreshed_at: clock, strength: before.strength });
    expect(await events(s, pg, "shown")).toBe(1);
    expect(await events(s, pg, "used")).toBe(0);
    // Other memories were not shown.
    expect((await row(s, ids.get("The React frontend")!)).shown_count).toBe(0);
    await fetchMemory(s, pg.slice(0, 8));
    const used = await row(s, pg);
    expect(used).toMatchObject({ shown_count: 1, used_count: 1 });
    expect(used.strength).toBeGreaterThan(before.strength);
    expect(await events(s, pg, "used")).toBe(1);
    clock = start;
  });

  test("session state survives a restart on the same home", async () => {
    const first = makeServices({ now: () => clock });
    const ids = await seed(first);
    const pg = ids.get("The staging Postgres")!;
    expect(await recallIndex(first, { session_id: "s1", prompt: POSTGRES, project: "infra" })).toMatchObject({ shown: [pg], turn: 1 });
    const home = first.config.home;
    await first.close();
    const second = services({ home });
    expect(await recallIndex(second, { session_id: "s1", prompt: POSTGRES, project: "infra" })).toEqual({ block: null, shown: [], turn: 2 });
    expect(await recallIndex(second, { session_id: "s1", reset: true })).toEqual({ ok: true, reset: true });
    expect(await recallIndex(second, { session_id: "s1", prompt: POSTGRES, project: "infra" })).toMatchObject({ shown: [pg], turn: 1 });
  });
});

describe("relevance gates and projects", () => {
  test("unrelated prompts get no block; related ones do", async () => {
    const s = services();
    await seed(s);
    const unrelated = [
      "how do I bake sourdough bread with rye flour?",
      "recommend a good science fiction novel about first contact",
      "what should I pack for a hiking trip in the Alps in October?",
      "explain the rules of cricket to a beginner",
      "translate 'good morning, how are you' into Portuguese",
      "what is the difference between baroque and classical music?",
    ];
    for (const [i, prompt] of unrelated.entries()) {
      expect(await recallIndex(s, { session_id: `u${i}`, prompt, project: i % 2 ? "infra" : undefined })).toMatchObject({ block: null, shown: [] });
    }
    const related = ["where is the terraform state of the infra project stored?", "how do production deploys get approved in GitHub Actions?"];
    for (const [i, prompt] of related.entries()) {
      const r = (await recallIndex(s, { session_id: `r${i}`, prompt, project: "infra" })) as { shown: string[] };
      expect(r.shown.length).toBeGreaterThan(0);
    }
  });

  test("a project keeps other projects' memories out; project-less ones may come in when strong", async () => {
    const s = services();
    const ids = await seed(s);
    const alpha = ids.get("The alpha build")!;
    const beta = ids.get("The beta build")!;
    const inAlpha = (await recallIndex(s, { session_id: "a", prompt: "where is the build cache stored?", project: "alpha" })) as {
      shown: string[];
      block: string;
    };
    expect(inAlpha.shown).toEqual([alpha]);
    const everywhere = (await recallIndex(s, { session_id: "b", prompt: "where is the build cache stored?" })) as { shown: string[]; block: string };
    expect(new Set(everywhere.shown)).toEqual(new Set([alpha, beta]));
    expect(everywhere.block).toContain("(project beta)");
    const global = ids.get("Always run bun")!;
    const viaProject = (await recallIndex(s, { session_id: "c", prompt: "how should I run bun test with the preload file?", project: "infra" })) as {
      shown: string[];
    };
    expect(viaProject.shown).toEqual([global]);
    // A weak project-less match stays out.
    expect(await recallIndex(s, { session_id: "d", prompt: "is there a temporary home for the staging service?", project: "infra" })).not.toMatchObject({
      shown: [global],
    });
  });
});

describe("the session's running topic", () => {
  const SHOP: string[] = [
    "Stripe webhooks are verified with the signing secret before an order payment is marked paid.",
    "The payment tests replay recorded events against a fake card server.",
    "The search indexer rebuilds the product catalogue index every night from Postgres.",
    "The catalogue sync tests run against a throwaway Meilisearch container.",
    "Invoices are rendered to PDF with a headless Chromium and stored in the invoices bucket.",
    "Customer emails go out through Postmark with the transactional template set.",
    // Filler, so words have realistic weights (a six-memory store makes every word common).
    ...Array.from(
      { length: 24 },
      (_, i) => `Release note ${i}: the warehouse team ${["moved", "renamed", "audited", "archived"][i % 4]} shelf ${i} of aisle ${i % 5}.`,
    ),
  ];
  async function shop(s: TestServices): Promise<string[]> {
    const ids: string[] = [];
    for (const content of SHOP) ids.push((await ingestMemory(s, { content, project: "shop" })).id!);
    return ids;
  }
  const shown = async (s: TestServices, session: string, prompt: string) =>
    ((await recallIndex(s, { session_id: session, prompt, project: "shop" })) as { shown?: string[] }).shown ?? [];

  test('a follow-up like "and the tests?" recalls the tests of what the session is about', async () => {
    const s = services();
    const [webhooks, paymentTests, , searchTests] = await shop(s);
    expect(await shown(s, "pay", "how are payment webhooks verified before an order is marked paid?")).not.toContain(paymentTests);
    await recallIndex(s, { session_id: "pay", reset: true });
    // Without a topic, the follow-up says too little to recall anything.
    expect(await recallIndex(s, { session_id: "fresh", prompt: "and the tests?", project: "shop" })).toEqual({ block: null, skipped: "short-prompt" });
    expect(await shown(s, "pay", "how are payment webhooks verified before an order is marked paid?")).toContain(webhooks);
    const followUp = await shown(s, "pay", "and the tests?");
    expect(followUp[0]).toBe(paymentTests);
    if (followUp.includes(searchTests)) expect(followUp.indexOf(searchTests)).toBeGreaterThan(0);
  });

  test("a change of topic is not drowned by the old one", async () => {
    const s = services();
    const [, paymentTests, rebuild, searchTests] = await shop(s);
    await shown(s, "switch", "how are payment webhooks verified before an order is marked paid?");
    expect(await shown(s, "switch", "when does the search indexer rebuild the product catalogue index?")).toContain(rebuild);
    const followUp = await shown(s, "switch", "and the tests?");
    expect(followUp[0]).toBe(searchTests);
    // The payment topic was left behind: its tests come after, if at all.
    if (followUp.includes(paymentTests)) expect(followUp.indexOf(paymentTests)).toBeGreaterThan(0);
  });

  test("the topic survives a restart and a reset forgets it", async () => {
    const first = makeServices({ now: () => clock });
    const [, paymentTests] = await shop(first);
    await shown(first, "r", "how are payment webhooks verified before an order is marked paid?");
    const home = first.config.home;
    await first.close();
    const second = services({ home });
    // Word weights count against the store's size, which a fresh store reads
    // in the background (on PostgreSQL one query, which a fast server's first
    // prompt can overtake): wait for it as the nightly and the warm-up do.
    await second.indexState.ready;
    expect((await shown(second, "r", "and the tests?"))[0]).toBe(paymentTests);
    await recallIndex(second, { session_id: "r", reset: true });
    expect(await recallIndex(second, { session_id: "r", prompt: "and the tests?", project: "shop" })).toEqual({ block: null, skipped: "short-prompt" });
  });
});

describe("projects", () => {
  test("a project's own memory ranks before a project-less one unless that is much stronger", async () => {
    const s = services();
    const own = (await ingestMemory(s, { content: "Run the shop test suite with bun test --preload ./test/setup.ts inside the shop folder.", project: "shop" }))
      .id!;
    const global = (await ingestMemory(s, { content: "Run bun test with the preload file so every test suite gets a temporary home.", project: null })).id!;
    for (const filler of ["Deploys of the shop go through the release workflow.", "The shop database is Postgres 16 on port 5432."])
      await ingestMemory(s, { content: filler, project: "shop" });
    const r = (await recallIndex(s, { session_id: "p", prompt: "how do I run the bun test suite with the preload file?", project: "shop" })) as {
      shown: string[];
    };
    expect(r.shown[0]).toBe(own);
    if (r.shown.includes(global)) expect(r.shown.indexOf(global)).toBeGreaterThan(0);
  });
});

describe("the short-prompt gate from both sides", () => {
  test("11 characters with two keywords are short; 12 are not", () => {
    expect(isShortPrompt("redis cache")).toBe(true);
    expect(isShortPrompt("redis caches")).toBe(false);
    expect(isShortPrompt("  redis cache  ")).toBe(true);
  });

  test("one keyword is short however long the prompt", () => {
    expect(isShortPrompt("postgresql postgresql postgresql")).toBe(true);
    expect(isShortPrompt("postgresql replication")).toBe(false);
  });
});
