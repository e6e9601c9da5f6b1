import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ingestMemory } from "../../../../src/core/ingest";
import { search } from "../../../../src/core/search";
import { absoluteRelevance, parseMinScore } from "../../../../src/core/search";
import { AppError } from "../../../../src/errors";
import { makeServices, type TestServices } from "../../../helpers/services";

/** A coding team's memory: nothing about geography. */
const CORPUS: [string, string][] = [
  ["The staging Postgres database listens on port 5433 behind pgbouncer; connect with psql -p 5433.", "infra"],
  ["Never push directly to main; open a pull request and wait for the CI checks.", "infra"],
  ["Stripe webhooks are verified with STRIPE_WEBHOOK_SECRET; rotate it in the dashboard, then redeploy the billing service.", "billing"],
  ["The billing service retries failed Stripe charges three times with exponential backoff.", "billing"],
  ["Production deploys run through the GitHub Actions workflow deploy.yml and need a manual approval.", "infra"],
  ["Terraform state lives in the S3 bucket infra-tfstate with DynamoDB locking.", "infra"],
  ["The React frontend is built with Vite into dist/ and served by the nginx container.", "web"],
  ["Run bun test with the preload file so every test gets a temporary service home.", "web"],
  ["The orders table gained fulfilled_at; backfill it with scripts/backfill_fulfilled_at.ts.", "billing"],
  ["Redis holds the session cache; it expires keys after six hours.", "web"],
];

let s: TestServices;
beforeAll(async () => {
  s = makeServices({ now: () => Date.parse("2026-03-10T12:00:00Z") });
  for (const [content, project] of CORPUS) await ingestMemory(s, { content, project });
});
afterAll(async () => {
  await s.close();
});

const top = async (query: string, extra: Record<string, unknown> = {}) => search(s, { query, limit: 10, ...extra });
const scoreOf = async (query: string, needle: string) => (await top(query)).results.find((r) => r.content.includes(needle))?.score ?? 0;

describe("search scores are absolute", () => {
  test("a memory matching only 'main' scores low; one answering every word scores high", async () => {
    const q = "which port does the staging postgres database listen on in main";
    const mainOnly = await scoreOf(q, "Never push directly to main");
    const answer = await scoreOf(q, "staging Postgres database listens");
    expect(answer).toBeGreaterThan(0.7);
    expect(mainOnly).toBeGreaterThanOrEqual(0);
    expect(mainOnly).toBeLessThan(0.3);
    const r = await top(q);
    expect(r.results[0].content).toContain("staging Postgres");
  });

  test("'what is the capital of France' against a coding store: low scores, nothing above a reasonable min_score", async () => {
    const all = await top("what is the capital of France");
    for (const hit of all.results) expect(hit.score).toBeLessThan(0.2);
    const kept = await top("what is the capital of France", { min_score: 0.3 });
    expect(kept).toEqual({ query: "what is the capital of France", count: 0, results: [] });
  });

  test("scores compare across queries: the best hit of a weak query no longer reads like the best hit of a good one", async () => {
    const good = await top("rotate the stripe webhook secret for billing");
    const weak = await top("how do I configure kubernetes ingress certificates on the main cluster");
    expect(good.results[0].content).toContain("STRIPE_WEBHOOK_SECRET");
    expect(good.results[0].score).toBeGreaterThan(0.7);
    // Its best hit shares one word ("main") of seven: it must read as a weak match, well below the good one.
    expect(weak.count).toBeGreaterThan(0);
    expect(weak.results[0].score).toBeLessThan(0.3);
    expect(weak.results[0].score).toBeLessThan(good.results[0].score / 2);
  });

  test("without min_score the top-k are still returned, best first", async () => {
    const r = await top("billing stripe");
    expect(r.count).toBeGreaterThanOrEqual(2);
    const scores = r.results.map((h) => h.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const h of r.results) {
      expect(h.score).toBeGreaterThanOrEqual(0);
      expect(h.score).toBeLessThanOrEqual(1);
      expect(h.relevance).toBeLessThanOrEqual(1);
    }
  });

  test("min_score keeps exactly the results at or above it", async () => {
    const all = await top("stripe billing service retries charges");
    const cut = all.results[1].score;
    const kept = await top("stripe billing service retries charges", { min_score: cut });
    expect(kept.results.map((h) => h.id)).toEqual(all.results.filter((h) => h.score >= cut).map((h) => h.id));
    expect(kept.count).toBeLessThan(all.count);
  });

  test("min_score must be a number in [0, 1]", async () => {
    for (const bad of ["abc", "-0.1", "1.5", 2, -1, "0x1", Number.NaN, true, {}]) {
      await expect(top("stripe", { min_score: bad })).rejects.toBeInstanceOf(AppError);
    }
    expect(parseMinScore("0.25")).toBe(0.25);
    expect(parseMinScore(1)).toBe(1);
    expect(parseMinScore(undefined)).toBeNull();
  });

  test("evidence combines: either source alone counts, both count more, neither is zero", () => {
    expect(absoluteRelevance("onnx", 0, 0.3)).toBe(0);
    expect(absoluteRelevance("onnx", 0, 0.9)).toBe(1);
    expect(absoluteRelevance("onnx", 0.5, undefined)).toBe(0.5);
    expect(absoluteRelevance("onnx", 0.5, 0.675)).toBeCloseTo(0.75, 5);
    // The hashing fallback's vectors repeat the words: they add little.
    expect(absoluteRelevance("fallback", 0, 0.9)).toBeLessThan(0.35);
  });
});
