import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { domainIndex, domainLift, renderDomainIndex } from "../../../../src/core/analytics";
import { ingestMemory } from "../../../../src/core/ingest";
import { makeServices, type TestServices } from "../../../helpers/services";

/**
 * Three projects written the way agents write: every memory leans on the
 * same generic words ("uses", "every", "main", "service", "team"), and each
 * project has its own vocabulary.
 */
const CORPUS: Record<string, string[]> = {
  billing: [
    "The billing service uses Stripe webhooks on every invoice event from the main account.",
    "Every Stripe invoice webhook is verified with the signing secret before the main handler uses it.",
    "Refunds go through Stripe; the team uses the invoice id as the idempotency key on every retry.",
    "The main billing job reconciles Stripe payouts against invoices every night.",
    "Invoice PDFs are rendered by the billing worker; it uses the Stripe invoice number on every page.",
    "Failed Stripe charges are retried three times; every webhook retry is logged by the main service.",
  ],
  infra: [
    "The infra team uses Terraform for every change to the main VPC.",
    "Every Kubernetes node pool is declared in Terraform; the main cluster uses autoscaling.",
    "Terraform state for the main account uses an S3 bucket with DynamoDB locking on every apply.",
    "Kubernetes upgrades go through the staging cluster first; the team uses a runbook every time.",
    "The main ingress controller on Kubernetes uses cert-manager to renew every certificate.",
    "Every Terraform plan is posted to the pull request; the main pipeline uses a read-only role.",
  ],
  web: [
    "The web frontend uses React with Vite; every route is lazy loaded from the main bundle.",
    "Every React component ships with a Storybook story; the main layout uses CSS grid.",
    "Vite builds the main bundle into dist; the team uses preview deploys for every pull request.",
    "The React router uses nested layouts; every page prefetches its data in the main loader.",
    "Storybook runs in CI on every change; Vite serves it locally and uses the main theme.",
    "Images on every page are lazy loaded; the main React shell uses suspense boundaries.",
  ],
};
const GENERIC = ["uses", "every", "main", "team", "use"];

let s: TestServices;
beforeAll(async () => {
  s = makeServices({});
  for (const [project, list] of Object.entries(CORPUS)) for (const content of list) await ingestMemory(s, { content, project });
});
afterAll(async () => {
  await s.close();
});

describe("domain keywords are the words that characterise a domain", () => {
  test("each project's own vocabulary, not the store's generic words", async () => {
    const idx = await domainIndex(s);
    const kw = (domain: string) => idx.domains.find((d) => d.domain === domain)!.keywords;
    expect(kw("billing").slice(0, 3)).toEqual(expect.arrayContaining(["stripe", "invoice"]));
    expect(kw("infra").slice(0, 3)).toEqual(expect.arrayContaining(["terraform", "kubernetes"]));
    expect(kw("web").slice(0, 3)).toEqual(expect.arrayContaining(["react", "vite"]));
    for (const d of ["billing", "infra", "web"]) {
      for (const g of GENERIC) expect(kw(d)).not.toContain(g);
      // A domain's own name is not one of its keywords.
      expect(kw(d)).not.toContain(d);
    }
  });

  test("the measure: a word concentrated in the domain beats one spread over the store, however frequent in the domain", () => {
    // In 6 of 6 sampled memories but also in 16 of the 18 in the store: common everywhere.
    const everywhere = domainLift(6, 6, 16, 18);
    // In 4 of 6 and nowhere else; in 2 of 6 and nowhere else.
    const own = domainLift(4, 6, 4, 18);
    const rare = domainLift(2, 6, 2, 18);
    expect(everywhere).toBeLessThan(Math.LN2);
    expect(rare).toBeGreaterThan(Math.LN2);
    expect(own).toBeGreaterThan(rare);
    // A tiny store still names its domains' words (the prior shrinks with the store).
    expect(domainLift(2, 3, 2, 6)).toBeGreaterThan(Math.LN2);
    // A big store: 20 of 40 in the domain, 0.2% of the store, against a word in 30 of 40 and a fifth of the store.
    expect(20 * domainLift(20, 40, 200, 100_000)).toBeGreaterThan(30 * domainLift(30, 40, 20_000, 100_000));
  });

  test("counts read in English: 1 memory, 2 memories, 1 learning", async () => {
    const one = makeServices({});
    try {
      await ingestMemory(one, { content: "Always pin the Node version in .nvmrc so CI matches local builds.", project: "tooling", memory_type: "learnings" });
      const text = renderDomainIndex(await domainIndex(one));
      expect(text).toStartWith("1 memory (1 learning) in 1 domain and 1 project.");
      expect(text).toContain("- tooling (project): 1 memory, 1 learning");
      expect(text).toContain("- tooling: 1 memory, 1 learning");
      expect(text).not.toMatch(/\b1 (memories|learnings|domains|projects)\b/);
      expect(renderDomainIndex(await domainIndex(s))).toStartWith("18 memories (0 learnings) in 3 domains and 3 projects.");
    } finally {
      await one.close();
    }
  });
});
