import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSource, splitMarkdown } from "../../../../../src/core/import";
import { projectOfSlug } from "../../../../../src/core/import/readers/claude-code";
import { buildClaudeCodeHome, buildClaudeMemDb } from "../../../../helpers/claude-mem-db";

const FIX = join(import.meta.dir, "../../../../fixtures/import");
const NOW = Date.UTC(2026, 0, 1);
const opts = { now: NOW };
const tmp = () => mkdtempSync(join(tmpdir(), "import-readers-"));

test("markdown: notes split into headings, bullets and observations with project, type, date, tags, links and file:line", async () => {
  const r = await readSource("markdown", join(FIX, "markdown", "vault"), opts);
  expect(r.problems).toEqual([]);
  expect(r.sources).toBe(5);
  const by = (s: string) => r.items.find((i) => i.content.includes(s))!;
  const decision = by("Orders are created before payment");
  expect(decision.content).toBe("Checkout flow — Decisions: Orders are created before payment so an abandoned payment still leaves a record to follow up");
  expect(decision.memoryType).toBe("decisions");
  expect(decision.project).toBe("shop");
  expect(decision.createdAt).toBe(Date.UTC(2025, 2, 14));
  expect(decision.provenance).toMatch(/shop\/Checkout flow\.md:13$/);
  expect(decision.tags).toEqual(["payments", "frontend"]);
  // The note's first piece carries its names and its relations (Basic Memory syntax) and wikilinks.
  const head = by("The checkout page posts the cart");
  expect(head.keys).toContain("note:checkout flow");
  expect(head.links.map((l) => `${l.relationship}>${l.to}`).sort()).toEqual([
    "depends_on>note:payment retries",
    "mentions>note:payment retries",
    "part_of>note:inbox",
  ]);
  // A short note is one memory; front matter type wins; inline #tags count.
  const retries = by("retried three times");
  expect(retries.memoryType).toBe("learnings");
  expect(retries.tags).toContain("payments");
  expect(retries.createdAt).toBe(Date.UTC(2025, 3, 2, 9, 30));
  // Basic Memory observation categories map to types; the note's title gives context.
  const lesson = by("Grinding right before brewing");
  expect(lesson.memoryType).toBe("learnings");
  expect(lesson.content.startsWith("Coffee Brewing Methods: ")).toBe(true);
  // Root notes have no project; relation bullets are not memories.
  expect(by("STRICT tables").project).toBeNull();
  expect(r.items.some((i) => i.content.includes("relates_to"))).toBe(false);
});

test("markdown: a bad front matter or a binary file is one line and adds nothing; the good file still reads", async () => {
  const r = await readSource("markdown", join(FIX, "markdown", "broken"), opts);
  expect(r.items.map((i) => i.content)).toEqual(["good\n\nThe deploy script tags each release with the short commit hash and the date."]);
  expect(r.problems.map((p) => [p.source.split("/").pop(), p.message.split(" (")[0]])).toEqual([
    ["bad-front-matter.md", "front matter is not valid YAML"],
    ["binary.md", "not a text file"],
  ]);
  const missing = await readSource("markdown", join(FIX, "nope"), opts);
  expect(missing.problems[0].message).toContain("does not exist");
});

test("splitMarkdown: a long section is cut at its blocks; task boxes are no categories; line numbers follow the file", () => {
  const para = (n: number) => `Paragraph ${n} ${"words about the deploy pipeline ".repeat(20)}`;
  const body = `# Deploy\n\n${para(1)}\n\n${para(2)}\n\n${para(3)}\n\n- [ ] check the canary dashboards before promoting\n- [x] page the on-call engineer when error rates rise\n`;
  const out = splitMarkdown(body, { title: null, wholeIfSmall: false, bodyLine: 5 });
  const prose = out.pieces.filter((p) => p.text.includes("Paragraph"));
  // Three paragraphs of ~650 characters: the first two fit one piece, the third starts another.
  expect(prose.map((p) => p.line)).toEqual([7, 11]);
  expect(prose.every((p) => p.text.length <= 1600 && p.text.startsWith("Deploy\n\nParagraph"))).toBe(true);
  expect(prose[0].text).toContain("Paragraph 2");
  const tasks = out.pieces.filter((p) => p.text.includes("canary") || p.text.includes("on-call"));
  expect(tasks.map((t) => [t.text, t.category, t.line])).toEqual([
    ["Deploy: check the canary dashboards before promoting", null, 13],
    ["Deploy: page the on-call engineer when error rates rise", null, 14],
  ]);
});

test("claude-code: user CLAUDE.md, rules, project CLAUDE.md files and automatic memory with the project from ~/.claude.json", async () => {
  const home = buildClaudeCodeHome();
  const r = await readSource("claude-code", home, opts);
  expect(r.problems).toEqual([]);
  const by = (s: string) => r.items.find((i) => i.content.includes(s))!;
  expect(r.items.every((i) => i.sourceAgent === "claude-code")).toBe(true);
  expect(by("ripgrep").project).toBeNull();
  expect(by("ripgrep").content).toBe("Tools: Use ripgrep (rg) instead of grep for searching code");
  expect(by("ripgrep").provenance).toBe(`${home}/.claude/CLAUDE.md:8`);
  expect(by("port 0").project).toBeNull();
  expect(by("Fastify").project).toBe("shop");
  expect(by("LaunchDarkly").project).toBe("shop");
  // Automatic memory: topic files are whole memories typed by their front matter; the index's pointers are not repeated.
  const pnpm = by("Always run pnpm");
  expect(pnpm.project).toBe("shop");
  expect(pnpm.memoryType).toBe("learnings");
  expect(pnpm.content.startsWith("Use pnpm, not npm")).toBe(true);
  expect(by("Releases go out every Tuesday").memoryType).toBe("decisions");
  expect(by("staging database is reset").project).toBe("shop");
  expect(r.items.some((i) => i.content.includes("feedback_pnpm.md"))).toBe(false);
  // One project folder alone.
  const one = await readSource("claude-code", join(home, "code", "shop"), opts);
  expect(one.items.map((i) => i.project)).toEqual(Array(one.items.length).fill("shop"));
  expect(one.items.length).toBe(5);
  // Not Claude Code at all.
  const empty = await readSource("claude-code", tmp(), opts);
  expect(empty.sources).toBe(0);
  expect(empty.problems[0].message).toContain("no Claude Code memory here");
});

test("claude-code: without ~/.claude.json the project comes from the slug, resolved on disk where it can be", () => {
  const root = tmp();
  mkdirSync(join(root, "my-app"), { recursive: true });
  expect(projectOfSlug(`${root.replace(/[^a-zA-Z0-9]/g, "-")}-my-app`, [])).toBe("my-app");
  expect(projectOfSlug("-nowhere-at-all-shop", [])).toBe("shop");
});

test("agents-md: AGENTS.md, GEMINI.md and CLAUDE.md under a folder, each under its repository's project and tool", async () => {
  const root = tmp();
  cpSync(join(FIX, "agents-md", "repos"), root, { recursive: true });
  mkdirSync(join(root, "api", ".git"));
  const r = await readSource("agents-md", root, opts);
  expect(r.sources).toBe(4);
  const by = (s: string) => r.items.find((i) => i.content.includes(s))!;
  expect([by("frozen-lockfile").project, by("frozen-lockfile").sourceAgent]).toEqual(["shop", "agents-md"]);
  expect(by("frozen-lockfile").content).toBe("Setup: Install dependencies with `pnpm install --frozen-lockfile`");
  expect([by("Drizzle Kit").sourceAgent, by("Drizzle Kit").project]).toEqual(["gemini", "shop"]);
  expect([by("TypeBox").sourceAgent, by("TypeBox").project]).toEqual(["claude-code", "api"]);
  // Nested in a repository: the repository's project.
  expect(by("VitePress").project).toBe("api");
  expect(r.items.some((i) => i.content.includes("Not an instruction file"))).toBe(false);
  const none = await readSource("agents-md", join(FIX, "mem0"), opts);
  expect(none.problems[0].message).toContain("no AGENTS.md");
});

test("mem0: get_all JSON (results or a bare list) with types, projects, categories and dates; a bad entry refuses the file", async () => {
  const r = await readSource("mem0", join(FIX, "mem0", "export.json"), opts);
  expect(r.problems).toEqual([]);
  expect(r.items.map((i) => [i.memoryType, i.project, i.createdAt])).toEqual([
    ["knowledge", null, Date.parse("2025-06-03T10:22:33.123-07:00")],
    ["decisions", "billing", Date.UTC(2025, 6, 11, 8)],
    ["knowledge", null, Date.UTC(2025, 7, 1, 12)],
  ]);
  expect(r.items[0].tags).toEqual(["user_preferences"]);
  expect(r.items[0].provenance).toMatch(/export\.json#1 \(mem0 7f1c2a9e-/);
  expect((await readSource("mem0", join(FIX, "mem0", "v1-list.json"), opts)).items.length).toBe(1);
  const cases: [string, string][] = [
    ["bad-entry.json", 'entry 2 has no "memory" text'],
    ["truncated.json", "not JSON"],
    ["foreign.json", "not a mem0 export"],
  ];
  for (const [file, message] of cases) {
    const bad = await readSource("mem0", join(FIX, "mem0", file), opts);
    expect(bad.items).toEqual([]);
    expect(bad.problems.length).toBe(1);
    expect(bad.problems[0].message).toContain(message);
  }
});

test("claude-mem: observations and summaries (current and sdk_session_id layouts) with types, projects, dates, concepts and session links", async () => {
  for (const legacy of [false, true]) {
    const file = buildClaudeMemDb(join(tmp(), "claude-mem.db"), { legacy });
    const r = await readSource("claude-mem", file, opts);
    expect(r.sources).toBe(1);
    expect(r.problems.map((p) => p.message)).toEqual(["1 row with no text was left out"]);
    expect(r.items.length).toBe(4);
    const [webhook, rounding, backups, summary] = r.items;
    expect(webhook.content).toBe(
      "Stripe webhooks are verified with the signing secret — webhook handler\n\nThe webhook handler rejects any event whose Stripe-Signature header does not verify against the endpoint's signing secret.\n\n- Unverified events answer 400\n- The secret is read from STRIPE_WEBHOOK_SECRET",
    );
    expect([webhook.memoryType, rounding.memoryType, backups.memoryType, summary.memoryType]).toEqual(["decisions", "learnings", "knowledge", "experience"]);
    expect([webhook.project, backups.project, summary.project]).toEqual(["shop", "infra", "shop"]);
    expect(webhook.createdAt).toBe(Date.UTC(2025, 4, 2, 9, 15));
    expect(webhook.tags).toEqual(["security", "payments"]);
    expect(webhook.provenance).toBe(`${file}#observations/1`);
    expect(webhook.links).toEqual([{ to: "claude-mem:session:mem-s1", relationship: "part_of" }]);
    expect(summary.keys).toEqual(["claude-mem:session:mem-s1"]);
    expect(summary.content).toContain("Learned: Signature checks need the raw request body");
  }
});

test("claude-mem: a file that is no SQLite database, or a database without its tables, is one line", async () => {
  const dir = tmp();
  writeFileSync(join(dir, "text.db"), "just text, not a database ".repeat(100));
  const other = new Database(join(dir, "other.db"), { create: true });
  other.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
  other.close();
  const partial = new Database(join(dir, "partial.db"), { create: true });
  partial.exec("CREATE TABLE observations (id INTEGER PRIMARY KEY, body TEXT)");
  partial.close();
  const cases: [string, string][] = [
    ["text.db", "not an SQLite database"],
    ["other.db", "not a claude-mem database: it has no observations table"],
    ["partial.db", "observations lacks project, type, memory_session_id, created_at_epoch, title/narrative/text: not a claude-mem layout this version reads"],
    ["missing.db", "does not exist"],
  ];
  for (const [file, message] of cases) {
    const r = await readSource("claude-mem", join(dir, file), opts);
    expect(r.items).toEqual([]);
    expect(r.problems.length).toBe(1);
    expect(r.problems[0].message).toContain(message);
  }
  rmSync(dir, { recursive: true, force: true });
});
