import { afterEach, describe, expect, test } from "bun:test";
import MarkdownIt from "markdown-it";
import { renderLearnings } from "../../../../src/core/nightly";
import { ingestMemory } from "../../../../src/core/ingest";
import { gist, recallIndex, RECALL_HEADING } from "../../../../src/core/recall";
import { makeServices, type TestServices } from "../../../helpers/services";

/** A real CommonMark renderer (raw HTML on, as a permissive chat client would): what the line turns into. */
const md = new MarkdownIt({ html: true });
const decode = (html: string) =>
  html
    .replace(/<[^>]+>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");

/** The line as the recall block shows it, rendered inside the block's list. */
function render(line: string): { html: string; text: string } {
  const html = md.render(`${RECALL_HEADING}\n- \`0123abcd\` knowledge, 2026-03-10: ${line}\n- \`4567ef01\` knowledge, 2026-03-10: next line\n`);
  return { html, text: decode(html) };
}

/** Every shape of name an agent types back, each in a sentence around it. */
const IDENTIFIERS = [
  "fulfilled_at",
  "STRIPE_WEBHOOK_SECRET",
  "__init__",
  "_private_helper",
  "scripts/backfill_fulfilled_at.ts",
  "./x",
  "~/.config/memsvc/config.json",
  "src/**/*.ts",
  "*.test.ts",
  "^foo_[a-z]+$",
  "--dry-run",
  "-rf",
  "https://example.com/a_b?x=1&y=2#frag",
  "C:\\Users\\me\\app_data",
  "a|b",
  "<script>",
  "[link](http://x.y)",
  "f(*args, **kwargs)",
  "arr[i]*2",
  "$HOME/.memsvc",
  "~~strike~~",
  "foo`bar",
];

describe("gist keeps identifiers verbatim and the line safe", () => {
  for (const id of IDENTIFIERS) {
    test(`round trip: ${id}`, () => {
      const content = `Set ${id} before the deploy, then check the logs.`;
      const line = gist(content, 400);
      const { html, text } = render(line);
      // What an agent reads raw, and what a renderer shows, both hold the name exactly.
      expect(text).toContain(id);
      expect(line).not.toContain("\n");
      // Still one list of two items under one heading: nothing broke out.
      expect((html.match(/<li>/g) ?? []).length).toBe(2);
      expect((html.match(/<h\d>/g) ?? []).length).toBe(1);
      expect(html).not.toMatch(/<(script|em|strong|s|del|a|blockquote)\b/);
      expect(text).toContain("next line");
    });
  }

  test("an identifier already in a code span stays as written", () => {
    expect(gist("Backfill `fulfilled_at` with `scripts/backfill_fulfilled_at.ts --dry-run` first.")).toBe(
      "Backfill `fulfilled_at` with `scripts/backfill_fulfilled_at.ts --dry-run` first.",
    );
    expect(gist("Wrap it as ``a `tick` inside`` here")).toBe("Wrap it as ``a `tick` inside`` here");
  });

  test("plain prose is left alone; sentence punctuation stays outside the code span", () => {
    expect(gist("The staging Postgres database listens on port 5433; connect with psql -p 5433.")).toBe(
      "The staging Postgres database listens on port 5433; connect with psql -p 5433.",
    );
    expect(gist("Rotate STRIPE_WEBHOOK_SECRET, then redeploy.")).toBe("Rotate `STRIPE_WEBHOOK_SECRET`, then redeploy.");
    expect(gist("Run it (see scripts/backfill_fulfilled_at.ts).")).toBe("Run it (see `scripts/backfill_fulfilled_at.ts`).");
  });

  test("emphasis around plain words is dropped, never inside a glob or path", () => {
    expect(gist("**Important**: never push to *main* directly")).toBe("Important: never push to main directly");
    expect(gist("Lint src/**/*.ts before commit")).toBe("Lint `src/**/*.ts` before commit");
  });

  test("Markdown-hostile content: block markers, HTML, unbalanced backticks", () => {
    const hostile = [
      "# Heading that is a memory",
      "- a list item",
      "> a quote",
      "1. numbered",
      "<script>alert(1)</script> in the note",
      "an `unbalanced backtick and a ``double",
      "```\ncode fence first\n```",
      "line one\n\n# line two\n- line three",
      "=====",
      "| a | b |",
    ];
    for (const content of hostile) {
      const line = gist(content, 400);
      expect(line).not.toMatch(/[\r\n]/);
      const { html, text } = render(line);
      expect((html.match(/<li>/g) ?? []).length).toBe(2);
      expect((html.match(/<h\d>/g) ?? []).length).toBe(1);
      expect(html).not.toMatch(/<(script|blockquote|ol|table|pre)\b/);
      expect(text).toContain("next line");
    }
    expect(gist("<script>alert(1)</script> in the note")).toBe("`<script>alert(1)</script>` in the note");
    expect(gist("```ts\nconst fulfilled_at = now();\n```")).toBe("const `fulfilled_at` = now();");
    expect(gist("---\n| a | b |\n|---|---|")).toBe("`|` a `|` b `|`");
    expect(gist("an `unbalanced backtick")).toBe("an `` `unbalanced `` backtick");
  });

  test("a cut never leaves an open code span", () => {
    const line = gist(`Use \`${"x".repeat(30)} ${"y".repeat(30)} ${"z".repeat(30)}\` to migrate the table`, 50);
    expect(line.endsWith("…")).toBe(true);
    const { html } = render(line);
    expect((html.match(/<li>/g) ?? []).length).toBe(2);
  });
});

describe("the blocks agents are shown", () => {
  const open: TestServices[] = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });

  test("recall block: the memory's identifiers arrive unchanged", async () => {
    const s = makeServices({ now: () => Date.parse("2026-03-10T12:00:00Z") });
    open.push(s);
    const content = "Orders: backfill fulfilled_at with scripts/backfill_fulfilled_at.ts after setting STRIPE_WEBHOOK_SECRET for the orders webhook.";
    const r = await ingestMemory(s, { content, project: "shop" });
    const out = await recallIndex(s, { session_id: "s", prompt: "how do I backfill fulfilled_at for orders with the webhook secret?", project: "shop" });
    const block = (out as { block: string }).block;
    expect(block).toContain(r.id!.slice(0, 8));
    for (const id of ["fulfilled_at", "scripts/backfill_fulfilled_at.ts", "STRIPE_WEBHOOK_SECRET"]) {
      expect(block).toContain(`\`${id}\``);
      expect(decode(md.render(block))).toContain(id);
    }
  });

  test("learnings block: same rule, counts in English", () => {
    const now = "2026-03-10T12:00:00.000Z";
    const view = {
      id: "0123abcd-0000-0000-0000-000000000000",
      short_id: "0123abcd",
      content: "# Migrations\nAlways run `bun run migrate` before touching order_items.fulfilled_at;\n- it fails on __pycache__",
      created_at: now,
      project: "shop",
    } as unknown as Parameters<typeof renderLearnings>[0][number];
    const block = renderLearnings([view], { days: 7, project: "shop", index: { memories: 1, learnings: 1, by_type: {}, projects: [], domains: [] } })!;
    const line = block.split("\n").find((l) => l.startsWith("- `0123abcd`"))!;
    expect(line).toContain("Migrations Always run `bun run migrate` before touching `order_items.fulfilled_at`; it fails on `__pycache__`");
    expect(block).toContain("Memory holds 1 memory (1 learning)");
  });
});
