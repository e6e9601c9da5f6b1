import { expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addLink } from "../../../../src/core/graph";
import { exportMarkdown, importItems, readSource, type ImportItem } from "../../../../src/core/import";
import { memoryDetail } from "../../../../src/core/memories";
import { ingestMemory } from "../../../../src/core/ingest";
import { dbRows } from "../../../helpers/engine";
import { makeServices } from "../../../helpers/services";

const FIX = join(import.meta.dir, "../../../fixtures/import");
const tmp = () => mkdtempSync(join(tmpdir(), "import-bulk-"));

const item = (content: string, over: Partial<ImportItem> = {}): ImportItem => ({
  content,
  memoryType: "knowledge",
  project: "shop",
  createdAt: Date.UTC(2025, 0, 1),
  sourceAgent: "test-tool",
  provenance: "notes.md:1",
  tags: [],
  keys: [],
  links: [],
  ...over,
});

test("an import into a fresh home writes memories with provenance and links; a re-run adds nothing", async () => {
  const s = makeServices();
  const read = await readSource("markdown", join(FIX, "markdown", "vault"), { now: Date.now() });
  const first = await importItems(s, read.items);
  expect([first.added, first.merged, first.skipped]).toEqual([11, 0, 0]);
  expect(first.links).toBe(3);
  expect(first.unresolved).toBe(2);
  const rows = await dbRows(s, "SELECT content, memory_type, project, source_agent, source_session, created_at FROM memories ORDER BY content");
  expect(rows.length).toBe(11);
  const pg = rows.find((r) => r.content.startsWith("Postgres upgrade"))!;
  // Every imported text passes redaction.
  expect(pg.content).toContain("postgres://admin:[REDACTED:password]@db.internal");
  expect(pg.content).not.toContain("Sup3rS3cret");
  expect([pg.project, pg.source_agent]).toEqual(["infra", "markdown"]);
  expect(pg.source_session).toMatch(/infra\/Postgres upgrade\.md:3$/);
  const links = await dbRows(s, "SELECT relationship FROM links WHERE relationship != 'related' ORDER BY relationship");
  expect(links.map((l) => l.relationship)).toEqual(["depends_on", "mentions", "part_of"]);

  const again = await importItems(s, (await readSource("markdown", join(FIX, "markdown", "vault"), { now: Date.now() })).items);
  expect([again.added, again.merged, again.skipped, again.links]).toEqual([0, 0, 11, 0]);
  expect((await dbRows(s, "SELECT count(*) AS n FROM memories"))[0].n).toBe(11);
  expect((await dbRows(s, "SELECT count(*) AS n FROM links WHERE relationship != 'related'"))[0].n).toBe(3);
  await s.close();
});

test("merging into a home with memories: exact repeats skipped, near-duplicates merged as distill merges, the rest added", async () => {
  const s = makeServices();
  const kept = await ingestMemory(s, {
    content: "The shop deploys with blue-green releases on Kubernetes every Tuesday",
    project: "shop",
    memory_type: "decision",
  });
  await ingestMemory(s, { content: "Cart totals are rounded once, on the sum", project: "shop" });
  const before = (await dbRows(s, "SELECT strength FROM memories WHERE id = ?", [kept.id!]))[0].strength;
  const out = await importItems(s, [
    item("Cart totals are rounded once,   on the SUM"),
    item("The shop deploys with blue-green releases on Kubernetes every Tuesday."),
    item("Feature flags default to off when LaunchDarkly is unreachable"),
    item("Feature flags default to off when LaunchDarkly is unreachable", { provenance: "other.md:4" }),
    // Same text, other project: not a repeat.
    item("Cart totals are rounded once, on the sum", { project: "billing" }),
  ]);
  expect([out.added, out.merged, out.skipped]).toEqual([2, 1, 2]);
  const after = (await dbRows(s, "SELECT strength FROM memories WHERE id = ?", [kept.id!]))[0].strength;
  expect(after).toBeGreaterThan(before);
  expect((await dbRows(s, "SELECT count(*) AS n FROM memories"))[0].n).toBe(4);
  await s.close();
});

test("a dry run counts and samples without writing", async () => {
  const s = makeServices();
  await ingestMemory(s, { content: "Cart totals are rounded once, on the sum", project: "shop" });
  const out = await importItems(s, [item("Cart totals are rounded once, on the sum"), item("Receipts are emailed within a minute of payment")], {
    dryRun: true,
  });
  expect([out.dryRun, out.candidates, out.skipped, out.added]).toEqual([true, 1, 1, 0]);
  expect(out.sample.map((m) => m.content)).toEqual(["Receipts are emailed within a minute of payment"]);
  expect((await dbRows(s, "SELECT count(*) AS n FROM memories"))[0].n).toBe(1);
  await s.close();
});

test("a batch that fails to write rolls back whole; earlier batches stay and a re-run completes without repeats", async () => {
  const s = makeServices();
  // Texts of made-up words: no two are near-duplicates, so every one is a new memory.
  const syllables = ["ka", "lo", "mi", "ter", "van", "sul", "dro", "pex", "qui", "bam", "zor", "fen"];
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
  const word = () => Array.from({ length: 3 }, () => syllables[Math.floor(rnd() * syllables.length)]).join("");
  const items = Array.from({ length: 300 }, (_, i) => item(Array.from({ length: 10 }, word).join(" "), { project: `p${i % 3}` }));
  const insert = s.storage.memories.insertMemories.bind(s.storage.memories);
  let calls = 0;
  const tx = s.storage.transaction.bind(s.storage);
  // The second batch's insert throws inside its transaction.
  (s.storage as { transaction: typeof tx }).transaction = (fn) =>
    tx((t) => {
      const wrapped = Object.create(t, {
        memories: {
          value: Object.create(t.memories, {
            insertMemories: { value: async (rows: never) => (++calls === 2 ? Promise.reject(new Error("disk full")) : t.memories.insertMemories(rows)) },
          }),
        },
      });
      return fn(wrapped);
    });
  await expect(importItems(s, items)).rejects.toThrow("disk full");
  expect((await dbRows(s, "SELECT count(*) AS n FROM memories"))[0].n).toBe(256);
  (s.storage as { transaction: typeof tx }).transaction = tx;
  void insert;
  const rerun = await importItems(s, items);
  expect([rerun.added, rerun.skipped]).toEqual([44, 256]);
  expect((await dbRows(s, "SELECT count(*) AS n FROM memories"))[0].n).toBe(300);
  await s.close();
});

test("Markdown round trip: export --format markdown, import into an empty home: memories, types, projects, dates and links come back", async () => {
  const s = makeServices();
  const ids: string[] = [];
  const seed = [
    { content: "Use pnpm in the shop repository; npm rewrites the lockfile", project: "shop", memory_type: "decision", session_date: "2025-02-03" },
    { content: "The CDN cached the cart endpoint for an hour in January", project: "shop", memory_type: "episode", session_date: "2025-01-20" },
    { content: "Backups keep fourteen days in the eu-west bucket", project: "infra/ops", memory_type: "fact", session_date: "2024-12-24" },
    { content: "Prefer small commits whose messages say why", project: null, memory_type: "lesson", session_date: "2024-11-02" },
  ];
  for (const m of seed) ids.push((await ingestMemory(s, { ...m, source_agent: "claude-code" })).id!);
  await addLink(s, ids[0], ids[1], "caused_by", 0.8);
  await addLink(s, ids[2], ids[3], "related", 0.55);
  const folder = join(tmp(), "vault");
  const ex = await exportMarkdown(s.storage, folder);
  expect([ex.memories, ex.projects]).toEqual([4, 3]);
  expect(readdirSync(folder).sort()).toEqual(["_no-project", "infra-ops", "shop"]);
  expect(statSync(folder).mode & 0o777).toBe(0o700);
  const shopFile = readdirSync(join(folder, "shop")).find((f) => f.startsWith(ids[0].slice(0, 8)))!;
  expect(statSync(join(folder, "shop", shopFile)).mode & 0o777).toBe(0o600);
  const text = readFileSync(join(folder, "shop", shopFile), "utf8");
  expect(text).toContain(`id: ${ids[0]}`);
  expect(text).toContain("type: decisions");
  expect(text).toMatch(/- caused_by \[\[[0-9a-f]{8}-the-cdn-cached-the-cart-endpoint\]\] \(weight 0\.8\)/);
  await expect(exportMarkdown(s.storage, folder)).rejects.toThrow("is not an empty folder");
  const original = await dbRows(s, "SELECT content, memory_type, project, created_at, source_agent FROM memories ORDER BY content");
  await s.close();

  const fresh = makeServices();
  const out = await importItems(fresh, (await readSource("markdown", folder, { now: Date.now() })).items);
  expect([out.added, out.merged, out.skipped, out.unresolved]).toEqual([4, 0, 0, 0]);
  expect(await dbRows(fresh, "SELECT content, memory_type, project, created_at, source_agent FROM memories ORDER BY content")).toEqual(original);
  const links = await dbRows(
    fresh,
    "SELECT a.content AS a, b.content AS b, l.relationship, l.weight FROM links l JOIN memories a ON a.id = l.from_id JOIN memories b ON b.id = l.to_id WHERE l.relationship != 'related' OR l.weight = 0.55 ORDER BY relationship",
  );
  expect(links.map((l) => [l.a.slice(0, 20), l.b.slice(0, 20), l.relationship, l.weight])).toEqual([
    ["Use pnpm in the shop", "The CDN cached the c", "caused_by", 0.8],
    ["Backups keep fourtee", "Prefer small commits", "related", 0.55],
  ]);
  // Provenance survives to the browser's detail view.
  const id = (await dbRows(fresh, "SELECT id FROM memories WHERE project = 'infra/ops'"))[0].id;
  const detail = await memoryDetail(fresh, id);
  expect(detail.memory.source_agent).toBe("claude-code");
  expect(detail.links.map((l) => l.relationship)).toEqual(["related"]);
  // And a second import of the same folder adds nothing.
  const again = await importItems(fresh, (await readSource("markdown", folder, { now: Date.now() })).items);
  expect([again.added, again.skipped]).toEqual([0, 4]);
  await fresh.close();
});
