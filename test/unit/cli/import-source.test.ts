import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { preparedInWorker } from "../../../src/cli/import-source";
import { prepareStream, streamSource, type PreparedChunk } from "../../../src/core/import";
import { hashOf } from "../../../src/core/import/prepare";
import { IMPORT_READ_FILES } from "../../../src/core/import/tuning";
import { FallbackEmbedder } from "../../../src/embed/fallback";

/**
 * A vault of more files than one chunk, in two projects: one note holds a
 * secret, and the last file (in the second chunk) repeats beta's first note.
 */
function vault(): string {
  const dir = mkdtempSync(join(tmpdir(), "import-source-"));
  for (const p of ["alpha", "beta"]) mkdirSync(join(dir, p));
  const note = (i: number) => `---\ntitle: note ${i}\n---\nNote number ${i} about caching in project ${i % 2 ? "alpha" : "beta"}.\n`;
  for (let i = 0; i < IMPORT_READ_FILES + 39; i++)
    writeFileSync(
      join(dir, i % 2 ? "alpha" : "beta", `note ${String(i).padStart(4, "0")}.md`),
      i === 7 ? "The staging token is ghp_0123456789abcdefghijABCDEFGHIJ012345 for now.\n" : note(i),
    );
  writeFileSync(join(dir, "beta", "zz repeat.md"), note(0));
  return dir;
}

async function all(chunks: AsyncIterable<PreparedChunk>): Promise<PreparedChunk[]> {
  const out: PreparedChunk[] = [];
  for await (const c of chunks) out.push(c);
  return out;
}

test("a folder prepared in the worker thread comes in chunks equal to this thread's: redacted, repeats found (stored and earlier), vectors embedded", async () => {
  const dir = vault();
  const now = Date.UTC(2026, 0, 1);
  // A memory the store holds already: its text repeats exactly.
  const existing = new Map([[hashOf("alpha", "note 1\n\nNote number 1 about caching in project alpha."), 42]]);
  const log: string[] = [];
  const inWorker = await all(preparedInWorker({ kind: "markdown", path: dir, now, existing, embed: true }, (_level, line) => log.push(line)));
  const here = await all(prepareStream(streamSource("markdown", dir, { now }), existing));
  expect(log).toEqual([]);
  expect(inWorker.length).toBe(2);
  expect(inWorker.map((c) => c.of)).toEqual([
    { done: IMPORT_READ_FILES, total: IMPORT_READ_FILES + 40 },
    { done: IMPORT_READ_FILES + 40, total: IMPORT_READ_FILES + 40 },
  ]);
  const items = inWorker.flatMap((c) => c.items);
  expect(items.map(({ item, repeat }) => ({ item, repeat }))).toEqual(here.flatMap((c) => c.items.map(({ item, repeat }) => ({ item, repeat }))));
  expect(items.length).toBe(IMPORT_READ_FILES + 40);
  // Redaction ran on every item, in the worker.
  expect(items.find((p) => p.item.content.includes("staging token"))!.item.content).toContain("[REDACTED:");
  expect(items.some((p) => p.item.content.includes("ghp_0123456789"))).toBe(false);
  // The stored repeat (alpha's first file) and the earlier item's (beta's first, after alpha's 275 files).
  expect(items.filter((p) => p.repeat).map((p) => p.repeat)).toEqual([{ seq: 42 }, { item: 275 }]);
  expect(items[275].item.content).toBe("note 0\n\nNote number 0 about caching in project beta.");
  expect(inWorker[1].items.at(-1)!.repeat).toEqual({ item: 275 });
  // New items carry the hashing embedder's vectors; repeats carry none.
  const embedder = new FallbackEmbedder();
  const fresh = items.filter((p) => !p.repeat);
  expect(fresh.every((p) => p.vector instanceof Float32Array)).toBe(true);
  expect([...fresh[5].vector!]).toEqual([...(await embedder.embed([fresh[5].item.content], "document"))[0]]);
  expect(items.filter((p) => p.repeat).every((p) => p.vector === undefined)).toBe(true);
});

test("a source the worker cannot read is its problem line, as in this thread", async () => {
  const missing = join(tmpdir(), "import-source-missing-folder");
  const chunks = await all(preparedInWorker({ kind: "markdown", path: missing, now: 0, existing: new Map(), embed: false }, () => {}));
  expect(chunks).toEqual([{ read: 0, items: [], problems: [{ source: missing, message: `${missing} does not exist` }], sources: 0, of: undefined }]);
});
