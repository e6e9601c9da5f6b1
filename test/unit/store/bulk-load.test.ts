import { afterEach, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportAll, importAll } from "../../../src/core/memories";
import type { NewMemoryRow } from "../../../src/core/memories/store";
import type { NewLink } from "../../../src/core/graph";
import { hashEmbed } from "../../../src/embed/fallback";
import { importItems, type ImportItem } from "../../../src/core/import";
import { search } from "../../../src/core/search";
import { dbRows, onPostgres, sqliteStoreOf } from "../../helpers/engine";
import { checkHome } from "../../helpers/integrity";
import { makeServices, type TestServices } from "../../helpers/services";

// An import writes a batch of memories and then its links in one call each; on
// SQLite a call that large runs the triggers' work once for the batch
// (src/store/sqlite/bulk-load.ts). What lands must be what row-by-row writes leave.
const open: TestServices[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

const N = 150;
function rows(): NewMemoryRow[] {
  return Array.from({ length: N }, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    // Quotes, a new line, non-ASCII and an emoji travel as they are.
    content: `bulk memory ${i}: the ${["billing", "search", "deploy"][i % 3]} service retries ${i % 7} times${i % 9 === 0 ? ` "ünïcode" 🚀\n'quoted' \\ end` : ""}`,
    memoryType: "knowledge",
    project: i % 2 ? "alpha" : null,
    sourceAgent: "bulk-test",
    sourceAgentId: null,
    sourceDomain: null,
    sourceSession: `note-${i}.md:1`,
    privacy: "WORK",
    createdAt: 1_700_000_000_000 + i,
    updatedAt: 1_700_000_000_000 + i,
    refreshedAt: 1_700_000_000_000 + i,
    strength: i % 4 ? 1 : 1.25,
    // The member who imported it, where a member token did (both insert statements carry it).
    createdBy: i % 3 ? "dana" : null,
    vector: hashEmbed(`bulk memory ${i}`),
    // Ties on weight pick the tag first by name; some memories have none.
    tags:
      i % 5 === 0
        ? []
        : [
            { tag: ["zeta", "alpha", "mid"][i % 3], weight: 0.5 },
            { tag: ["beta", "aaa", "omega"][i % 3], weight: i % 2 ? 0.5 : 0.9 },
          ],
  }));
}
/** Links among the first 40 (stored before) and the new ones: repeats with other weights, a link to itself, one already stored. */
function links(ids: string[]): NewLink[] {
  const out: NewLink[] = [];
  for (let i = 40; i < N; i++) {
    out.push({ fromId: ids[i], toId: ids[i % 40], relationship: "related", weight: 0.5 });
    out.push({ fromId: ids[i], toId: ids[(i * 7) % N], relationship: "extends", weight: 0.3 });
    if (i % 10 === 0) out.push({ fromId: ids[i], toId: ids[i % 40], relationship: "related", weight: 0.8 });
    if (i % 25 === 0) out.push({ fromId: ids[i], toId: ids[i], relationship: "related", weight: 0.7 });
  }
  out.push({ fromId: ids[1], toId: ids[2], relationship: "related", weight: 0.95 });
  return out;
}

async function load(bulk: boolean): Promise<TestServices> {
  const s = makeServices();
  open.push(s);
  const all = rows();
  const ids = all.map((r) => r.id);
  // The first 40 and one link between them are there before, written row by row.
  for (const r of all.slice(0, 40)) await s.storage.memories.insertMemories([r]);
  await s.storage.graph.addLinks([{ fromId: ids[1], toId: ids[2], relationship: "related", weight: 0.6 }], 5);
  const rest = all.slice(40);
  await s.storage.transaction(async (tx) => {
    if (bulk) await tx.memories.insertMemories(rest);
    else for (const r of rest) await tx.memories.insertMemories([r]);
    if (bulk) await tx.graph.addLinks(links(ids), 7);
    else for (const l of links(ids)) await tx.graph.addLinks([l], 7);
  });
  return s;
}

const snapshot = async (s: TestServices) => ({
  memories: await dbRows(s, "SELECT * FROM memories ORDER BY seq"),
  tags: await dbRows(s, "SELECT memory_id, tag, weight FROM memory_tags ORDER BY memory_id, tag"),
  domains: await dbRows(s, "SELECT memory_id, domain FROM memory_primary_domain ORDER BY memory_id"),
  links: await dbRows(s, "SELECT from_id, to_id, relationship, weight, created_at FROM links ORDER BY from_id, to_id, relationship"),
  stats: await s.storage.stats().then((x) => [x.memories, x.links]),
  found: (await s.storage.search.fullText(["retries"], null, 500)).length,
});

test("a batch of memories and links written in one call each stores what row-by-row writes store", async () => {
  const one = await load(false);
  const bulk = await load(true);
  const a = await snapshot(one);
  const b = await snapshot(bulk);
  expect(b).toEqual(a);
  expect(b.stats).toEqual([N, b.links.length]);
  expect(b.found).toBe(N);
  for (const s of [one, bulk]) expect((await checkHome(s.config.home)).problems).toEqual([]);
});

test.skipIf(onPostgres)("SQLite: the bulk path leaves the schema as it was, and a failure inside it rolls the batch and the schema back", async () => {
  const s = makeServices();
  open.push(s);
  const db = sqliteStoreOf(s).sqlite;
  const schema = () => db.query("SELECT type, name, sql FROM sqlite_master ORDER BY name").all();
  const before = schema();
  const all = rows();
  await s.storage.memories.insertMemories(all.slice(0, 100));
  expect(schema()).toEqual(before);
  // A repeated id fails the 70th insert of the next batch: nothing of it stays, the triggers are back.
  const bad = all.slice(100).concat(all.slice(100, 120).map((r) => ({ ...r, content: `again ${r.content}` })));
  await expect(s.storage.memories.insertMemories(bad)).rejects.toThrow();
  expect(schema()).toEqual(before);
  expect((await dbRows(s, "SELECT count(*) AS n FROM memories"))[0].n).toBe(100);
  // Row by row afterwards, the triggers do their work again.
  await s.storage.memories.insertMemories(all.slice(100, 101));
  expect((await s.storage.stats()).memories).toBe(101);
  expect((await checkHome(s.config.home)).problems).toEqual([]);
});

test("an import large enough for the bulk path: a search finds an item with its provenance, and the store is whole", async () => {
  const s = makeServices();
  open.push(s);
  // Texts of made-up words (no two near-duplicates): 300 items, batches of 256 and 44.
  const syllables = ["ka", "lo", "mi", "ter", "van", "sul", "dro", "pex", "qui", "bam", "zor", "fen"];
  let seed = 11;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
  const word = () => Array.from({ length: 3 }, () => syllables[Math.floor(rnd() * syllables.length)]).join("");
  const items: ImportItem[] = Array.from({ length: 300 }, (_, i) => ({
    content: i === 170 ? "The invoice exporter retries the ledger upload at midnight" : Array.from({ length: 10 }, word).join(" "),
    memoryType: "knowledge",
    project: `p${i % 3}`,
    createdAt: Date.UTC(2025, 0, 1) + i,
    sourceAgent: "markdown",
    provenance: `vault/p${i % 3}/note-${i}.md:3`,
    tags: ["imported"],
    keys: [`note-${i}`],
    links: i > 0 ? [{ to: `note-${i - 1}`, relationship: "relates_to" }] : [],
  }));
  const out = await importItems(s, items);
  expect([out.added, out.merged, out.skipped, out.links]).toEqual([300, 0, 0, 299]);
  const hit = (await search(s, { query: "invoice exporter ledger upload" })).results[0];
  expect(hit.content).toBe("The invoice exporter retries the ledger upload at midnight");
  const row = (await dbRows(s, "SELECT source_agent, source_session, link_count FROM memories WHERE id = ?", [hit.id]))[0];
  expect(row).toEqual({ source_agent: "markdown", source_session: "vault/p2/note-170.md:3", link_count: 2 });
  expect((await checkHome(s.config.home)).problems).toEqual([]);
});

test("memsvc import of an export (a restore) takes the bulk path too: the same memories, link counts, domains, full text and counts", async () => {
  const source = await load(false);
  const file = join(mkdtempSync(join(tmpdir(), "bulk-restore-")), "export.jsonl");
  await exportAll(source.storage, source.config.paths.identity, file, { vectors: true });
  const restored = makeServices();
  open.push(restored);
  const schema = async () => (onPostgres ? null : sqliteStoreOf(restored).sqlite.query("SELECT type, name, sql FROM sqlite_master ORDER BY name").all());
  const before = await schema();
  const r = await importAll(restored, file);
  expect(r.memories).toBe(N);
  const a = await snapshot(source);
  const b = await snapshot(restored);
  // Every column comes back, link_count included; seq is the store's own and created_by is not in the export format.
  const strip = (rows: Record<string, unknown>[]) => rows.map(({ seq: _seq, created_by: _by, ...m }) => m);
  expect(strip(b.memories)).toEqual(strip(a.memories));
  expect({ ...b, memories: null }).toEqual({ ...a, memories: null });
  expect(b.memories.some((m) => m.link_count > 1)).toBe(true);
  expect(await schema()).toEqual(before);
  expect((await checkHome(restored.config.home)).problems).toEqual([]);
});
